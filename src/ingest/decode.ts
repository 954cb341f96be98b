/**
 * Turns the raw body of a capture (`/e/`, `/i/v0/e/`, `/batch/`, …) or `/flags` request into the JSON value the
 * SDK meant to send. The official SDKs wrap that JSON in several ways, sometimes without saying so:
 *
 * - plain JSON (posthog-node without compression, curl);
 * - gzip, announced by `Content-Encoding: gzip` or `?compression=gzip|gzip-js`, or not announced at all
 *   (posthog-js sends gzip as `text/plain` with no header and no query) — so the magic bytes decide;
 * - lz-string base64 (`?compression=lz64` or `Content-Encoding: lz64`), raw or as a form field `data=`;
 * - base64 JSON, raw or as a form field `data=` (posthog-js `/flags` with `?compression=base64`);
 * - the same `data=` in the query string of a GET.
 *
 * Any layer that does not decode throws a {@link DecodeError} whose message names the layer and the reason. Every
 * layer is held to the size cap as it produces output (a bomb stops at the cap, not after it), and the JSON to
 * the nesting limit before it is parsed.
 */

import { promisify } from 'node:util'
import { brotliDecompress, brotliDecompressSync, gunzip, gunzipSync, inflate, inflateSync } from 'node:zlib'
import { limitNesting, MAX_JSON_DEPTH } from './json-nesting.js'
import { decompressLz64, Lz64Error } from './lz64.js'

export class DecodeError extends Error {
  override readonly name: string = 'DecodeError'
  /** 400 for a malformed body, 413 when the decoded body is larger than allowed. */
  readonly statusCode: number = 400
}

export class PayloadTooLargeError extends DecodeError {
  override readonly name = 'PayloadTooLargeError'
  override readonly statusCode = 413
}

export interface DecodeInput {
  body: Buffer
  contentType?: string
  contentEncoding?: string
  query: Record<string, string | undefined>
  /** Largest decoded size accepted, in bytes (gzip/lz64 bombs). Default 20 MiB. */
  maxBytes?: number
}

type Compression = 'none' | 'gzip' | 'deflate' | 'br' | 'lz64' | 'base64'

const DEFAULT_MAX_BYTES = 20 * 1024 * 1024
// Below this, the thread-pool hop of async zlib costs more than inflating inline.
const SYNC_INFLATE_LIMIT = 64 * 1024

const gunzipAsync = promisify(gunzip)
const inflateAsync = promisify(inflate)
const brotliAsync = promisify(brotliDecompress)
const utf8 = new TextDecoder('utf-8', { fatal: true })

export interface DecodedCapture {
  payload: unknown
  /** Positions in the batch whose event nested too deep: cut out before parsing, `null` in `payload`. */
  tooDeep: number[]
  /** Fields a form body carries beside `data` (older server SDKs send the key and send time there). */
  form?: { apiKey?: string; sentAt?: string }
}

/** Decodes a body as one JSON value (a `/flags` request): nesting too deep anywhere refuses it. */
export async function decodeCaptureBody(input: DecodeInput): Promise<unknown> {
  const { text, what } = await decodeToText(input)
  return parseJson(text, what, false).payload
}

/** Decodes a capture body: an event of a batch that nests too deep is left out alone (listed in `tooDeep`). */
export async function decodeCapturePayload(input: DecodeInput): Promise<DecodedCapture> {
  const { text, what, form } = await decodeToText(input)
  const decoded = parseJson(text, what, true)
  return form === undefined ? decoded : { ...decoded, form }
}

interface JsonText {
  text: string
  /** Which layer produced the text, for error messages. */
  what: string
  form?: DecodedCapture['form']
}

async function decodeToText(input: DecodeInput): Promise<JsonText> {
  const maxBytes = input.maxBytes ?? DEFAULT_MAX_BYTES
  let hint = compressionFromQuery(input.query.compression)
  let encoding = compressionFromHeader(input.contentEncoding)
  let bytes: Buffer = input.body
  // lz64 is text, not a byte stream: the header is a hint for the text layer, decoded by the same bounded decoder.
  if (encoding === 'lz64') {
    encoding = 'none'
    hint = 'lz64'
  }

  if (bytes.length === 0) {
    const fromQuery = input.query.data
    if (fromQuery === undefined || fromQuery === '') throw new DecodeError('request body is empty')
    return decodeText(fromQuery, hint, maxBytes, true)
  }

  if (encoding !== 'none' || hint === 'gzip' || isGzip(bytes)) {
    const kind = isGzip(bytes) ? 'gzip' : encoding !== 'none' ? encoding : 'gzip'
    if (kind === 'gzip' && !isGzip(bytes) && looksLikeJson(bytes)) {
      // Announced as gzip but sent plain (a proxy already inflated it): take the body as it is.
    } else {
      bytes = await inflateBytes(bytes, kind, maxBytes)
    }
    if (hint === 'gzip') hint = 'none'
  } else if (bytes.length > maxBytes) {
    throw new PayloadTooLargeError(`request body is ${bytes.length} bytes, over the ${maxBytes} byte limit`)
  }

  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw new DecodeError('request body is not valid UTF-8 (and not gzip)')
  }

  let fromForm = false
  if (isForm(input.contentType, text)) {
    const form = new URLSearchParams(text)
    const data = form.get('data')
    if (data === null) throw new DecodeError("form-encoded body has no 'data' field")
    const formCompression = form.get('compression')
    if (formCompression !== null) hint = compressionFromQuery(formCompression)
    text = data
    fromForm = true
    const apiKey = form.get('api_key') ?? form.get('token') ?? undefined
    const sentAt = form.get('sent_at') ?? undefined
    if (apiKey !== undefined || sentAt !== undefined) {
      return { ...(await decodeText(text, hint, maxBytes, fromForm)), form: { apiKey, sentAt } }
    }
  }
  return decodeText(text, hint, maxBytes, fromForm)
}

async function decodeText(text: string, hint: Compression, maxBytes: number, fromForm: boolean): Promise<JsonText> {
  let payload = text.trim()
  if (payload === '') throw new DecodeError('payload is empty')
  const first = payload.charCodeAt(0)
  const isJson = first === 0x7b /* { */ || first === 0x5b /* [ */
  // A form decoder turns an unescaped '+' into a space; base64 has no spaces, so put them back (JSON keeps its own).
  if (fromForm && !isJson && payload.includes(' ')) payload = payload.replaceAll(' ', '+')

  if (hint === 'lz64' && !isJson) {
    return { text: lz64Text(payload, maxBytes), what: 'lz64-decoded payload' }
  }
  if (isJson) {
    // A '[' or '{' can still open base64 only in theory ('[' and '{' are not in the alphabet), so this is JSON.
    return { text: payload, what: 'payload' }
  }
  if (!isBase64(payload)) {
    throw new DecodeError(
      hint === 'base64'
        ? 'payload is not valid base64'
        : 'payload is neither JSON nor base64 (is a compression parameter missing?)',
    )
  }
  let decoded: Buffer = Buffer.from(payload, 'base64')
  if (decoded.length === 0) throw new DecodeError('base64 payload decodes to nothing')
  if (isGzip(decoded)) decoded = await inflateBytes(decoded, 'gzip', maxBytes)
  else if (decoded.length > maxBytes) {
    throw new PayloadTooLargeError(`decoded payload is over the ${maxBytes} byte limit`)
  }
  let json: string
  try {
    json = utf8.decode(decoded)
  } catch {
    throw new DecodeError('base64 payload does not decode to UTF-8 text')
  }
  return { text: json, what: 'base64-decoded payload' }
}

function lz64Text(payload: string, maxBytes: number): string {
  // lz-string pads to a multiple of four itself, sometimes with three '=', so only the alphabet is checked.
  const compact = /\s/.test(payload) ? payload.replace(/\s+/g, '') : payload
  // PostHog answers every lz64 failure with the same words.
  if (!LZ64.test(compact)) throw new DecodeError('Failed to decompress data.')
  let out: string
  try {
    // One UTF-16 unit is at least one UTF-8 byte, so the cap in units never lets more bytes through.
    out = decompressLz64(compact, maxBytes)
  } catch (err) {
    if (!(err instanceof Lz64Error)) throw err
    if (err.isTooLarge) throw new PayloadTooLargeError(`lz64 payload ${err.message}`)
    throw new DecodeError('Failed to decompress data.')
  }
  if (out === '') throw new DecodeError('Failed to decompress data.')
  return out
}

function parseJson(text: string, what: string, batchItems: boolean): DecodedCapture {
  const checked = limitNesting(text, MAX_JSON_DEPTH, batchItems)
  if (!checked.ok) throw new DecodeError(`${what} nests deeper than ${MAX_JSON_DEPTH} levels`)
  try {
    return { payload: JSON.parse(checked.text), tooDeep: checked.removed }
  } catch (err) {
    throw new DecodeError(`Invalid JSON: ${(err as Error).message} (in the ${what})`)
  }
}

async function inflateBytes(bytes: Buffer, kind: Compression, maxBytes: number): Promise<Buffer> {
  const options = { maxOutputLength: maxBytes }
  try {
    if (bytes.length <= SYNC_INFLATE_LIMIT) {
      if (kind === 'deflate') return inflateSync(bytes, options)
      if (kind === 'br') return brotliDecompressSync(bytes, options)
      return gunzipSync(bytes, options)
    }
    if (kind === 'deflate') return await inflateAsync(bytes, options)
    if (kind === 'br') return await brotliAsync(bytes, options)
    return await gunzipAsync(bytes, options)
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    if (e.code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
      throw new PayloadTooLargeError(`${kind} body decompresses past the ${maxBytes} byte limit`)
    }
    throw new DecodeError(`Failed to decompress data. Invalid ${kind} data: ${e.message}`)
  }
}

function compressionFromQuery(value: string | undefined): Compression {
  if (value === undefined) return 'none'
  switch (value.trim().toLowerCase()) {
    case '':
    case 'none':
      return 'none'
    case 'gzip':
    case 'gzip-js':
      return 'gzip'
    case 'lz64':
    case 'lz-string':
      return 'lz64'
    case 'base64':
      return 'base64'
    default:
      throw new DecodeError(`unsupported compression '${value}' (expected gzip, gzip-js, lz64 or base64)`)
  }
}

function compressionFromHeader(value: string | undefined): Compression {
  if (value === undefined) return 'none'
  const v = value.trim().toLowerCase()
  if (v === '' || v === 'identity') return 'none'
  if (v === 'gzip' || v === 'x-gzip') return 'gzip'
  if (v === 'deflate') return 'deflate'
  if (v === 'br') return 'br'
  if (v === 'lz64' || v === 'lz-string') return 'lz64'
  throw new DecodeError(`unsupported Content-Encoding '${value}' (expected gzip, deflate, br or lz64)`)
}

function isGzip(bytes: Buffer): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b
}

function looksLikeJson(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue
    return b === 0x7b || b === 0x5b
  }
  return false
}

function isForm(contentType: string | undefined, text: string): boolean {
  if (contentType?.toLowerCase().includes('application/x-www-form-urlencoded')) {
    const first = text.trimStart().charCodeAt(0)
    // Some clients label a JSON body as a form; only a body that is not JSON is read as one.
    return first !== 0x7b && first !== 0x5b
  }
  return text.startsWith('data=')
}

// Standard and URL-safe alphabets, optional padding, whitespace tolerated (line-wrapped base64).
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/
const LZ64 = /^[A-Za-z0-9+/]+=*$/

function isBase64(text: string): boolean {
  const compact = /\s/.test(text) ? text.replace(/\s+/g, '') : text
  if (compact.length === 0 || !BASE64.test(compact)) return false
  const unpadded = compact.replace(/=+$/, '').length
  return unpadded % 4 !== 1
}
