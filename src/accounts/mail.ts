import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import nodemailer from 'nodemailer'

export interface Mail {
  to: string
  subject: string
  text: string
  replyTo?: string
}

export interface Mailer {
  /** Where mail goes, for the start-up log: the SMTP server, or the outbox directory. */
  readonly destination: string
  send(mail: Mail): Promise<void>
  close(): void
}

/**
 * Every mail Burrow sends goes through nodemailer: to the SMTP server of `SMTP_URL`, or, with none set, into
 * `<DATA_DIR>/outbox/` as one `.eml` file per message (readable by any mail client), so that links in
 * verification, invite and reset mails are never lost on an instance without mail.
 */
export function createMailer(config: { smtpUrl: string | undefined; dataDir: string; from: string }): Mailer {
  if (config.smtpUrl) {
    const transport = nodemailer.createTransport(config.smtpUrl)
    const url = new URL(config.smtpUrl)
    return {
      destination: `SMTP server ${url.hostname}:${url.port || (url.protocol === 'smtps:' ? 465 : 587)}`,
      async send(mail) {
        await transport.sendMail({ from: config.from, ...mail })
      },
      close: () => transport.close(),
    }
  }
  const outbox = path.join(config.dataDir, 'outbox')
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
  return {
    destination: `${outbox} (no SMTP_URL set: each mail is written there as an .eml file)`,
    async send(mail) {
      const info = await transport.sendMail({ from: config.from, ...mail })
      fs.mkdirSync(outbox, { recursive: true, mode: 0o700 })
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${crypto.randomBytes(4).toString('hex')}.eml`
      fs.writeFileSync(path.join(outbox, name), info.message as Buffer, { mode: 0o600 })
    },
    close: () => transport.close(),
  }
}
