import { fileURLToPath } from 'node:url'
import { execa, type ResultPromise } from 'execa'

export interface FixtureServer {
  url: string
  /** Resolves once the server has printed `text` (a fixture says what it got to, for a test to wait on). */
  printed(text: string): Promise<void>
  stop(): Promise<void>
}

/** Starts `test/fixtures/servers/<name>.ts` (with `args`) as its own process and waits for its port. */
export async function startFixtureServer(name: string, args: readonly string[] = []): Promise<FixtureServer> {
  const file = fileURLToPath(new URL(`../fixtures/servers/${name}.ts`, import.meta.url))
  const sub: ResultPromise = execa(process.execPath, [file, ...args], {
    stdout: 'pipe',
    stderr: 'inherit',
    buffer: false,
    reject: false,
    cleanup: true,
  })
  let out = ''
  const port = await new Promise<number>((resolve, reject) => {
    sub.stdout?.setEncoding('utf8')
    sub.stdout?.on('data', (text: string) => {
      out += text
      const m = /listening (\d+)/u.exec(text)
      if (m) resolve(Number(m[1]))
    })
    void sub.then(() => reject(new Error(`fixture ${name} exited before listening`)))
  })
  return {
    url: `http://127.0.0.1:${port}`,
    printed: (text) =>
      new Promise<void>((resolve) => {
        const seen = (): void => {
          if (!out.includes(text)) return
          sub.stdout?.off('data', seen)
          resolve()
        }
        sub.stdout?.on('data', seen)
        seen()
      }),
    stop: async () => {
      sub.kill()
      await sub
    },
  }
}

/** Runs `body` against the named fixture server, stopping it afterwards whatever happens. */
export async function withServer(
  name: string,
  body: (url: string) => Promise<void>,
  args: readonly string[] = [],
): Promise<void> {
  const server = await startFixtureServer(name, args)
  try {
    await body(server.url)
  } finally {
    await server.stop()
  }
}
