// Without a built web app (`webDir: null`, as when only the server was built), `/` is the landing page and the
// app's addresses are the API's 404.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({ webDir: null })
})
afterAll(() => t.close())

it('shows the landing page at / when no app is built', async () => {
  const res = await t.burrow.app.inject({ method: 'GET', url: '/' })
  expect(res.statusCode).toBe(200)
  expect(res.body).toContain('<title>Burrow</title>')
  expect(res.body).toContain('/i/v0/e/')
  const login = await t.burrow.app.inject({ method: 'GET', url: '/login' })
  expect(login.statusCode).toBe(404)
  expect(login.json()).toMatchObject({ code: 'not_found' })
})
