import type { AddressInfo } from 'node:net'
import { simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  to: string[]
  subject: string
  text: string
  replyTo: string | undefined
}

/** A real SMTP server on a free port, collecting what Burrow sends (nodemailer speaks plain SMTP to it). */
export async function startMailServer() {
  const received: ReceivedMail[] = []
  const waiters: { match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }[] = []
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const to = (Array.isArray(parsed.to) ? parsed.to : parsed.to ? [parsed.to] : []).flatMap((a) =>
            a.value.map((v) => v.address ?? ''),
          )
          const mail: ReceivedMail = {
            to,
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            replyTo: parsed.replyTo?.value[0]?.address,
          }
          received.push(mail)
          for (const w of [...waiters]) {
            if (w.match(mail)) {
              waiters.splice(waiters.indexOf(w), 1)
              w.resolve(mail)
            }
          }
          callback()
        })
        .catch(callback)
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    /** The first mail (already received or still to come) to `to` whose subject matches. */
    next(to: string, subject: RegExp, timeoutMs = 10_000): Promise<ReceivedMail> {
      const match = (m: ReceivedMail) => m.to.includes(to) && subject.test(m.subject)
      const found = received.find(match)
      if (found) {
        received.splice(received.indexOf(found), 1)
        return Promise.resolve(found)
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no mail to ${to} matching ${subject}`)), timeoutMs)
        waiters.push({
          match,
          resolve: (m) => {
            clearTimeout(timer)
            received.splice(received.indexOf(m), 1)
            resolve(m)
          },
        })
      })
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
export type MailServer = Awaited<ReturnType<typeof startMailServer>>

/** The first link to SITE_URL in a mail's text. */
export function linkIn(mail: ReceivedMail, siteUrl: string): URL {
  const match = new RegExp(`${siteUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/\\S+`).exec(mail.text)
  if (!match) throw new Error(`no link in: ${mail.text}`)
  return new URL(match[0])
}
