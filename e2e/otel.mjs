// What the example's tracing sends out, read back by the browser tests: the spans file its
// test-only exporter writes (OTEL_SPANS_FILE, examples/nextjs/lib/otel-file-exporter.ts), and a
// local OTLP endpoint that @vercel/otel's own exporter posts to (OTEL_EXPORTER_OTLP_ENDPOINT).
import { existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'

/** The spans written to `file` so far, one object per line (none while the file does not exist). */
export function readSpans(file) {
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))
}

/**
 * An OTLP/HTTP endpoint on 127.0.0.1 that keeps every post (`{ path, contentType, body }`, the body
 * a Buffer) and answers 200. `url` is what OTEL_EXPORTER_OTLP_ENDPOINT takes.
 */
export function startOtlpEndpoint() {
  const posts = []
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      posts.push({ path: req.url, contentType: req.headers['content-type'], body: Buffer.concat(chunks) })
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf' }).end()
    })
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        posts,
        close: () => new Promise((done) => server.close(() => done())),
      })
    })
  })
}
