import { META_KEY as META_TEXT } from './parse-chunk.ts'

const LF = 0x0a
const CR = 0x0d
/** An SGLang /generate event as it streams: one `data:` line holding the cumulative text first. */
const GENERATE_EVENT = Buffer.from('data: {"text":"')
const DONE_EVENT = Buffer.from('data: [DONE]')
const META_KEY = Buffer.from(META_TEXT)
const CLOSE_BRACE = 0x7d
const QUOTE = 0x22

export interface GenerateEventSink {
  /**
   * An SGLang-shaped event: whether its text is non-empty, its meta_info's JSON text, and its whole data (for when
   * meta_info was not the last key after all).
   */
  generate: (nonEmptyText: boolean, metaJson: string, data: () => string) => void
  done: () => void
  /** Any other event, whole (its lines and the blank line that ends it), for the standard SSE parser. */
  other: (text: string) => void
  /** A line longer than the cap. */
  tooLong: () => void
}

/**
 * SGLang's /generate stream read from its bytes. Each event repeats the whole answer so far (its text and output
 * ids), so a 128-token answer is ~140 KB of events of which the client needs only each one's meta_info (~300 bytes)
 * and whether its text is empty: decoding every event to a string and handing it to an SSE parser took ~15 % of the
 * load thread's time and much of its garbage (issue 35). Events are cut at the blank line that ends them (a newline
 * byte is never part of a multi-byte character); one that is a single `data: {"text":"…,"meta_info":{…}}` line is
 * read here, and any other (comments, `event:`/`id:` fields, several data lines, an error field) goes whole to the
 * SSE parser. A stream with a carriage return anywhere (CRLF line ends) goes to the parser from there on, as it came.
 */
export class GenerateEventReader {
  #pending: Buffer | undefined
  #standard = false
  readonly #decoder = new TextDecoder()
  readonly sink: GenerateEventSink
  readonly maxLineBytes: number

  constructor(sink: GenerateEventSink, maxLineBytes: number) {
    this.sink = sink
    this.maxLineBytes = maxLineBytes
  }

  feed(chunk: Buffer): void {
    if (this.#standard) {
      this.sink.other(this.#decoder.decode(chunk, { stream: true }))
      return
    }
    const buf = this.#pending === undefined ? chunk : Buffer.concat([this.#pending, chunk])
    this.#pending = undefined
    if (chunk.indexOf(CR) >= 0) {
      this.#standard = true
      this.sink.other(this.#decoder.decode(buf, { stream: true }))
      return
    }
    let at = 0
    for (;;) {
      // one scan a single-line event (the usual one): its first newline is the blank line's start
      const lf = buf.indexOf(LF, at)
      if (lf < 0 || lf + 1 >= buf.length) break
      if (buf[lf + 1] === LF) {
        this.#line(buf, at, lf)
        at = lf + 2
        continue
      }
      const end = buf.indexOf('\n\n', lf)
      if (end < 0) break
      this.sink.other(buf.toString('utf8', at, end + 2))
      at = end + 2
    }
    if (at < buf.length) {
      const rest = buf.subarray(at)
      if (rest.length <= this.maxLineBytes)
        // a copy: the rest of a large read must not keep the whole read alive
        this.#pending = Buffer.from(rest)
      else if (rest.indexOf(LF) < 0) this.sink.tooLong()
      else {
        // a long event of several lines: the standard parser judges its lines
        this.#standard = true
        this.sink.other(this.#decoder.decode(rest, { stream: true }))
      }
    }
  }

  /** One event of a single line: buf[start, end), the blank line after it. */
  #line(buf: Buffer, start: number, end: number): void {
    const length = end - start
    if (length > this.maxLineBytes) {
      this.sink.tooLong()
      return
    }
    if (length === DONE_EVENT.length && buf.compare(DONE_EVENT, 0, length, start, end) === 0) {
      this.sink.done()
      return
    }
    // compared and searched in place: no Buffer view an event
    const meta =
      length > GENERATE_EVENT.length + META_KEY.length ? buf.lastIndexOf(META_KEY, end - META_KEY.length) : -1
    if (
      meta > start &&
      buf[end - 1] === CLOSE_BRACE &&
      buf.compare(GENERATE_EVENT, 0, GENERATE_EVENT.length, start, start + GENERATE_EVENT.length) === 0
    ) {
      // `{"text":""` is an empty text; the meta_info object runs to the event's last brace but one
      const metaJson = buf.toString('utf8', meta + META_KEY.length - 1, end - 1)
      this.sink.generate(buf[start + GENERATE_EVENT.length] !== QUOTE, metaJson, () =>
        buf.toString('utf8', start + 6, end),
      )
      return
    }
    this.sink.other(buf.toString('utf8', start, end + 2))
  }
}
