"""Makes llama.cpp's server say what each of its steps was (issue 43): a line on stderr for every micro-batch its
llama_decode runs, when the server is started with LLAMA_STEP_LOG=1 (2: the GPU's work waited for, so `compute_us`
is the step's device time, at the cost of the overlap between one micro-batch's GPU work and the next one's host
work). Applied to c392e5094's src/llama.cpp before a build (h100-predict.sh STEPLOG=1); a diagnostic, not shipped.

  STEPLOG t_us=… tokens=N seqs=S n_kv=W used=H head=P build_us=… inputs_us=… compute_us=…

n_kv is the window every token of the step attends over (the highest occupied cell, padded), used the cells held
(what /metrics calls kv_cache_tokens); inputs_us is llama_set_inputs, where the host builds the attention mask of
tokens × n_kv cells one std::set lookup at a time.

  python3 step-log-patch.py LLAMA_SRC_DIR
"""

import pathlib
import sys

path = pathlib.Path(sys.argv[1]) / "src" / "llama.cpp"
src = path.read_text()
if "STEPLOG" in src:
    sys.exit(0)


def once(old, new):
    global src
    if src.count(old) < 1:
        sys.exit(f"step-log-patch: not found in {path}: {old!r}")
    src = src.replace(old, new, 1)


# the first llama_set_inputs / alloc pair is llama_decode_impl's (the second is the encoder's)
once(
    "        ggml_backend_sched_alloc_graph(lctx.sched.get(), gf);\n\n        llama_set_inputs(lctx, ubatch);\n",
    "        ggml_backend_sched_alloc_graph(lctx.sched.get(), gf);\n\n"
    "        const int64_t steplog_t1 = ggml_time_us();\n"
    "        llama_set_inputs(lctx, ubatch);\n"
    "        const int64_t steplog_t2 = ggml_time_us();\n",
)
once(
    "        const int         n_threads  = ubatch.n_tokens == 1 ? cparams.n_threads : cparams.n_threads_batch;\n",
    "        const int64_t steplog_t0 = ggml_time_us();\n"
    "        const int         n_threads  = ubatch.n_tokens == 1 ? cparams.n_threads : cparams.n_threads_batch;\n",
)
once(
    "        // update the kv ring buffer\n        {\n            kv_self.head += ubatch.n_tokens;\n",
    "        {\n"
    "            static const char * steplog_env = getenv(\"LLAMA_STEP_LOG\");\n"
    "            if (steplog_env != nullptr) {\n"
    "                if (atoi(steplog_env) >= 2) {\n"
    "                    ggml_backend_sched_synchronize(lctx.sched.get());\n"
    "                }\n"
    "                const int64_t steplog_t3 = ggml_time_us();\n"
    "                std::set<llama_seq_id> steplog_seqs;\n"
    "                for (uint32_t i = 0; i < ubatch.n_tokens; ++i) {\n"
    "                    steplog_seqs.insert(ubatch.seq_id[i / ubatch.n_seq_tokens][0]);\n"
    "                }\n"
    "                fprintf(stderr, \"STEPLOG t_us=%lld tokens=%u seqs=%zu n_kv=%u used=%u head=%u build_us=%lld \"\n"
    "                        \"inputs_us=%lld compute_us=%lld\\n\", (long long) steplog_t0, ubatch.n_tokens,\n"
    "                        steplog_seqs.size(), kv_self.n, kv_self.used, kv_self.head,\n"
    "                        (long long) (steplog_t1 - steplog_t0), (long long) (steplog_t2 - steplog_t1),\n"
    "                        (long long) (steplog_t3 - steplog_t2));\n"
    "            }\n"
    "        }\n\n"
    "        // update the kv ring buffer\n        {\n            kv_self.head += ubatch.n_tokens;\n",
)
if "#include <set>" not in src:
    src = "#include <set>\n" + src
path.write_text(src)
print(f"step-log-patch: {path} patched")
