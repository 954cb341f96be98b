// Closing a refused connection without reading the rest of its body.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/**
 * How long a refused connection whose body is still arriving stays open, unread, after its answer went out: long
 * enough for a client still uploading to read its answer before the reset that closing on unread data sends
 * (closed at once, most 4 MB uploads on loopback saw the reset instead of the 429), short enough not to pile up.
 */
export const LINGER_MS = 250
/** Refused connections left lingering at once (in this process); past this, one closes once its answer is out. */
const MAX_LINGERING = 512
let lingering = 0

/** Refused connections lingering now (for tests). */
export const lingeringConnections = () => lingering

/**
 * Once the answer to `req` has been written, closes its connection without reading the rest of its body. Node's
 * HTTP server would read an unread body to its end first (`IncomingMessage._dump` when the answer is written,
 * then `destroySoon` once a `Connection: close` answer is flushed, reading meanwhile): a throttled lz64 flood's
 * ~200 KB of each 250 KB body, ~0.45 ms of the event loop each. Here reading stops when the answer has been
 * written, the FIN goes out with it, and the socket is destroyed LINGER_MS later, whatever of the body is still
 * on its way. A body that had fully arrived is left to Node (nothing to skip, and no reset). The answer must
 * carry `Connection: close`.
 */
export function closeUnread(req: IncomingMessage, res: ServerResponse): void {
  // `_paused` is the flag Node's HTTP server itself sets to keep a socket from being resumed by its request
  // (back-pressure); `_handle.readStop` stops reading at once (the request parser reads the handle directly).
  const socket = req.socket as Socket & { _paused?: boolean; _handle?: { readStop?: () => number } | null }
  res.once('finish', () => {
    if (req.complete || socket.destroyed) return
    if (lingering >= MAX_LINGERING || typeof socket._handle?.readStop !== 'function') {
      socket.destroy()
      return
    }
    socket._paused = true
    socket._handle.readStop()
    // Node's `destroySoon` destroys the socket once the FIN is out, which would reset a client still uploading
    // before it reads its answer; the timer does it instead.
    socket.removeListener('finish', socket.destroy)
    lingering++
    const timer = setTimeout(() => socket.destroy(), LINGER_MS)
    timer.unref()
    socket.once('close', () => {
      clearTimeout(timer)
      lingering--
    })
  })
}
