// String well-formedness methods (ES2024), present in Node 20; the project compiles against ES2023 otherwise, so
// that nothing newer than Node 20 offers (Promise.withResolvers, …) type-checks by accident.
interface String {
  isWellFormed(): boolean
  toWellFormed(): string
}
