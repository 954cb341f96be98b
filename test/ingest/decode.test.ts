import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { describe, expect, it } from 'vitest'
import { DecodeError, decodeCaptureBody, PayloadTooLargeError } from '../../src/ingest/decode.js'

const payload = {
  api_key: 'phc_test',
  batch: [{ event: '$pageview', distinct_id: 'user-1', properties: { $current_url: 'https://example.com/ä' } }],
}
const json = JSON.stringify(payload)
const b64 = Buffer.from(json).toString('base64')
const lz = LZString.compressToBase64(json)

function decode(body: Buffer | string, opts: { contentType?: string; contentEncoding?: string; query?: object } = {}) {
  return decodeCaptureBody({
    body: typeof body === 'string' ? Buffer.from(body) : body,
    contentType: opts.contentType,
    contentEncoding: opts.contentEncoding,
    query: (opts.query ?? {}) as Record<string, string | undefined>,
  })
}

describe('decodeCaptureBody accepts every SDK encoding', () => {
  const cases: [string, () => Promise<unknown>][] = [
    ['plain JSON', () => decode(json, { contentType: 'application/json' })],
    ['plain JSON with surrounding whitespace', () => decode(`\n  ${json}  \n`)],
    ['Content-Encoding: gzip (posthog-node)', () => decode(gzipSync(json), { contentEncoding: 'gzip' })],
    ['?compression=gzip-js', () => decode(gzipSync(json), { query: { compression: 'gzip-js' } })],
    ['?compression=gzip', () => decode(gzipSync(json), { query: { compression: 'gzip' } })],
    ['unannounced gzip sent as text/plain (posthog-js)', () => decode(gzipSync(json), { contentType: 'text/plain' })],
    ['Content-Encoding: deflate', () => decode(deflateSync(json), { contentEncoding: 'deflate' })],
    ['Content-Encoding: br', () => decode(brotliCompressSync(json), { contentEncoding: 'br' })],
    ['gzip announced but the body is plain JSON', () => decode(json, { contentEncoding: 'gzip' })],
    ['?compression=lz64 with a raw body', () => decode(lz, { query: { compression: 'lz64' } })],
    [
      '?compression=lz64 with a form body',
      () =>
        decode(`data=${encodeURIComponent(lz)}`, {
          contentType: 'application/x-www-form-urlencoded',
          query: { compression: 'lz64' },
        }),
    ],
    [
      'lz64 form body whose + signs were not escaped',
      () => decode(`data=${lz}`, { contentType: 'application/x-www-form-urlencoded', query: { compression: 'lz64' } }),
    ],
    ['lz64 named in the form itself', () => decode(`data=${encodeURIComponent(lz)}&compression=lz64`)],
    [
      'form data=base64 with ?compression=base64 (posthog-js /flags)',
      () =>
        decode(`data=${encodeURIComponent(b64)}`, {
          contentType: 'application/x-www-form-urlencoded',
          query: { compression: 'base64' },
        }),
    ],
    ['form data=base64 without content type or hint', () => decode(`data=${encodeURIComponent(b64)}`)],
    ['raw base64 JSON', () => decode(b64)],
    ['line-wrapped base64 JSON', () => decode(b64.replace(/(.{60})/g, '$1\n'))],
    ['URL-safe base64 without padding', () => decode(b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''))],
    ['base64 of a gzip body', () => decode(gzipSync(json).toString('base64'))],
    ['gzip body holding a form', () => decode(gzipSync(`data=${encodeURIComponent(b64)}`))],
    ['GET with data in the query string', () => decode(Buffer.alloc(0), { query: { data: b64 } })],
    ['JSON labelled as a form', () => decode(json, { contentType: 'application/x-www-form-urlencoded' })],
  ]
  it.each(cases)('%s', async (_name, run) => {
    expect(await run()).toEqual(payload)
  })

  it('inflates a large gzip body off the main thread with the same result', async () => {
    const big = { batch: Array.from({ length: 5000 }, (_, i) => ({ event: `e${i}`, distinct_id: `${i}` })) }
    const body = gzipSync(JSON.stringify(big), { level: 0 })
    expect(body.length).toBeGreaterThan(64 * 1024)
    expect(await decode(body)).toEqual(big)
  })

  it('decodes lz64 that lz-string padded with three equals signs', async () => {
    const body = 'N4IgpgbmB2AuIC5wEZkgDQgCYEsDOsO0AxrAPo5aIgCuIAvkA==='
    expect(await decode(body, { query: { compression: 'lz64' } })).toEqual({ event: 'e11', distinct_id: 'u' })
  })

  it('decodes a JSON array and a single event object', async () => {
    expect(await decode('[{"event":"a"}]')).toEqual([{ event: 'a' }])
    expect(await decode('{"event":"a","distinct_id":"x"}')).toEqual({ event: 'a', distinct_id: 'x' })
  })
})

describe('decodeCaptureBody rejects malformed bodies with a precise message', () => {
  const corruptGzip = Buffer.concat([gzipSync(json).subarray(0, 10), Buffer.from('this is not deflate data')])
  const truncatedGzip = gzipSync(json).subarray(0, 20)
  const cases: [string, () => Promise<unknown>, RegExp][] = [
    ['an empty body', () => decode(''), /request body is empty/],
    ['a whitespace-only body', () => decode('   '), /payload is empty/],
    ['corrupt gzip', () => decode(corruptGzip), /Failed to decompress data\. Invalid gzip data/],
    [
      'truncated gzip',
      () => decode(truncatedGzip, { contentEncoding: 'gzip' }),
      /Failed to decompress data\. Invalid gzip data/,
    ],
    ['gzip announced on a non-gzip body', () => decode('hello world', { contentEncoding: 'gzip' }), /Invalid gzip/],
    [
      'corrupt deflate',
      () => decode('not deflate', { contentEncoding: 'deflate' }),
      /Failed to decompress data\. Invalid deflate data/,
    ],
    ['bad JSON', () => decode('{"event": "a",'), /^Invalid JSON: .* \(in the payload\)$/],
    ['gzip of bad JSON', () => decode(gzipSync('{nope')), /^Invalid JSON: .* \(in the payload\)$/],
    ['text that is neither JSON nor base64', () => decode('hello, world!'), /neither JSON nor base64/],
    [
      'bad base64 with a base64 hint',
      () => decode('data=%%%%', { query: { compression: 'base64' } }),
      /not valid base64/,
    ],
    ['base64 of something that is not JSON', () => decode(Buffer.from('hello').toString('base64')), /^Invalid JSON: /],
    ['base64 with an impossible length', () => decode('abcde'), /neither JSON nor base64/],
    ['base64 of bytes that are not UTF-8', () => decode(Buffer.from([0xff, 0xfe, 0xfd]).toString('base64')), /UTF-8/],
    [
      'a form without a data field',
      () => decode('foo=bar', { contentType: 'application/x-www-form-urlencoded' }),
      /no 'data' field/,
    ],
    [
      'lz64 that is not base64',
      () => decode('{{{not lz', { query: { compression: 'lz64' } }),
      /^Invalid JSON: .* \(in the payload\)$/,
    ],
    [
      'lz64 that is not lz-string',
      () => decode('!!!!', { query: { compression: 'lz64' } }),
      /^Failed to decompress data\.$/ /* PostHog's words for any lz64 failure */,
    ],
    ['lz64 garbage', () => decode('AAAAAAAA', { query: { compression: 'lz64' } }), /^Failed to decompress data\.$/],
    [
      'an unknown compression parameter',
      () => decode(json, { query: { compression: 'zstd' } }),
      /unsupported compression 'zstd'/,
    ],
    [
      'an unknown Content-Encoding',
      () => decode(json, { contentEncoding: 'compress' }),
      /unsupported Content-Encoding/,
    ],
    ['a body that is not UTF-8', () => decode(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), /not valid UTF-8/],
  ]
  it.each(cases)('%s', async (_name, run, message) => {
    const err = await run().then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(DecodeError)
    expect((err as DecodeError).message).toMatch(message)
    expect((err as DecodeError).statusCode).toBe(400)
  })

  it('stops a gzip bomb at the size limit with a 413', async () => {
    const bomb = gzipSync(Buffer.alloc(5 * 1024 * 1024, 0x20))
    const err = await decodeCaptureBody({ body: bomb, query: {}, maxBytes: 1024 * 1024 }).catch((e) => e)
    expect(err).toBeInstanceOf(PayloadTooLargeError)
    expect((err as PayloadTooLargeError).statusCode).toBe(413)
  })

  it('stops an lz64 bomb at the size limit', async () => {
    const bomb = LZString.compressToBase64(`"${'a'.repeat(200_000)}"`)
    const err = await decodeCaptureBody({
      body: Buffer.from(bomb),
      query: { compression: 'lz64' },
      maxBytes: 10_000,
    }).catch((e) => e)
    expect(err).toBeInstanceOf(PayloadTooLargeError)
  })

  it('rejects a plain body over the size limit', async () => {
    const err = await decodeCaptureBody({ body: Buffer.from(json), query: {}, maxBytes: 10 }).catch((e) => e)
    expect(err).toBeInstanceOf(PayloadTooLargeError)
  })
})

describe('decodeCaptureBody with the real posthog-node SDK', () => {
  it('decodes what posthog-node sends to /batch/ into events the normalizer accepts', async () => {
    const { createServer } = await import('node:http')
    const { PostHog } = await import('posthog-node')
    const { extractEvents, normalizeEvent } = await import('../../src/ingest/normalize.js')
    const requests: { url: string; headers: Record<string, string | string[] | undefined>; body: Buffer }[] = []
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        requests.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) })
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":1}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    try {
      const client = new PostHog('phc_sdk_test', { host: `http://127.0.0.1:${port}`, flushAt: 1, flushInterval: 0 })
      client.capture({ distinctId: 'node-user', event: 'sdk event', properties: { plan: 'pro' } })
      await client.shutdown()
    } finally {
      server.close()
    }
    const batch = requests.find((r) => r.url.startsWith('/batch'))
    expect(batch).toBeDefined()
    expect(batch!.headers['content-encoding']).toBe('gzip')
    const body = await decodeCaptureBody({
      body: batch!.body,
      contentType: batch!.headers['content-type'] as string | undefined,
      contentEncoding: batch!.headers['content-encoding'] as string | undefined,
      query: Object.fromEntries(new URL(batch!.url, 'http://x').searchParams),
    })
    const extracted = extractEvents(body, {})
    expect(extracted.token).toBe('phc_sdk_test')
    const ev = normalizeEvent(extracted.events[0], 0, { now: new Date(), sentAt: extracted.sentAt })
    expect(ev).toMatchObject({ event: 'sdk event', distinctId: 'node-user', properties: { plan: 'pro' } })
  })
})
