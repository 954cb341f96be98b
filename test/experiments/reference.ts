// Reference distributions for the statistics tests, computed independently of the library the code uses:
// Simpson integration of the densities (log-gamma by Lanczos) and bisection for the quantiles.

function logGamma(x: number): number {
  const g = 7
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ]
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x)
  const y = x - 1
  let a = c[0]
  const t = y + g + 0.5
  for (let i = 1; i < g + 2; i++) a += c[i] / (y + i)
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a)
}

function simpson(f: (x: number) => number, a: number, b: number, n = 20_000): number {
  const h = (b - a) / n
  let s = f(a) + f(b)
  for (let i = 1; i < n; i++) s += f(a + i * h) * (i % 2 === 0 ? 2 : 4)
  return (s * h) / 3
}

/** Standard normal CDF. */
export function normalCdf(z: number): number {
  const pdf = (x: number) => Math.exp(-(x * x) / 2) / Math.sqrt(2 * Math.PI)
  const half = simpson(pdf, 0, Math.abs(z))
  return z >= 0 ? 0.5 + half : 0.5 - half
}

export function studentTCdf(t: number, df: number): number {
  const logC = logGamma((df + 1) / 2) - logGamma(df / 2) - 0.5 * Math.log(df * Math.PI)
  const pdf = (x: number) => Math.exp(logC - ((df + 1) / 2) * Math.log(1 + (x * x) / df))
  const half = simpson(pdf, 0, Math.abs(t))
  return t >= 0 ? 0.5 + half : 0.5 - half
}

function bisect(cdf: (x: number) => number, p: number): number {
  let lo = -50
  let hi = 50
  for (let i = 0; i < 80; i++) {
    const mid = (lo + hi) / 2
    if (cdf(mid) < p) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

export const normalQuantile = (p: number) => bisect(normalCdf, p)
export const studentTQuantile = (p: number, df: number) => bisect((x) => studentTCdf(x, df), p)
