"""A small llama-architecture GGUF with random weights, for calibrating against a real llama.cpp server.

llama.cpp's own gguf-py writes it (PYTHONPATH=<llama.cpp>/gguf-py). The weights are random, so the text is noise,
but the server does all the work a real model of this shape costs: every prompt token through every layer, every
output token a decode step over the KV cache. A SentencePiece vocabulary of byte tokens and single letters.

  python3 tiny-llama-gguf.py OUT.gguf [--embd 256] [--layers 4] [--ff 704] [--heads 8] [--ctx 4096] [--text-only]

--text-only types the byte tokens as control tokens, which a server does not render: every answer is then valid
UTF-8. A later llama.cpp's server (2026) parses each answer and fails a request whose output is not (a random model's
byte tokens make broken UTF-8); c392e5094 does not, and the issue-43 model keeps the byte tokens as they were.
"""
import argparse

import gguf
import numpy as np

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--embd", type=int, default=256)
p.add_argument("--layers", type=int, default=4)
p.add_argument("--ff", type=int, default=704)
p.add_argument("--heads", type=int, default=8)
p.add_argument("--ctx", type=int, default=4096)
p.add_argument("--text-only", action="store_true")
a = p.parse_args()

tokens = [b"<unk>", b"<s>", b"</s>"] + [f"<0x{i:02X}>".encode() for i in range(256)]
byte_type = gguf.TokenType.CONTROL if a.text_only else gguf.TokenType.BYTE
types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL] + [byte_type] * 256
for c in "abcdefghijklmnopqrstuvwxyz":
    for piece in (c, "\u2581" + c):
        tokens.append(piece.encode())
        types.append(gguf.TokenType.NORMAL)
scores = [0.0] * 3 + [-1000.0] * 256 + [-float(i) for i in range(len(tokens) - 259)]
vocab = len(tokens)

w = gguf.GGUFWriter(a.out, "llama")
w.add_name("tiny-random-llama")
w.add_context_length(a.ctx)
w.add_embedding_length(a.embd)
w.add_block_count(a.layers)
w.add_feed_forward_length(a.ff)
w.add_head_count(a.heads)
w.add_head_count_kv(a.heads)
w.add_layer_norm_rms_eps(1e-5)
w.add_rope_dimension_count(a.embd // a.heads)
w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
w.add_tokenizer_model("llama")
w.add_token_list(tokens)
w.add_token_scores(scores)
w.add_token_types(types)
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)

rng = np.random.default_rng(0)


def t(name, *shape, norm=False):
    x = np.ones(shape, dtype=np.float32) if norm else (rng.standard_normal(shape) * 0.02).astype(np.float16)
    w.add_tensor(name, x)


t("token_embd.weight", vocab, a.embd)
t("output_norm.weight", a.embd, norm=True)
t("output.weight", vocab, a.embd)
for i in range(a.layers):
    t(f"blk.{i}.attn_norm.weight", a.embd, norm=True)
    for n in ("q", "k", "v", "output"):
        t(f"blk.{i}.attn_{n}.weight", a.embd, a.embd)
    t(f"blk.{i}.ffn_norm.weight", a.embd, norm=True)
    t(f"blk.{i}.ffn_gate.weight", a.ff, a.embd)
    t(f"blk.{i}.ffn_up.weight", a.ff, a.embd)
    t(f"blk.{i}.ffn_down.weight", a.embd, a.ff)

w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print(f"{a.out}: llama, {a.layers} layers × {a.embd}, ff {a.ff}, vocab {vocab}")
