/** The command line was used wrongly (exit code 2), as opposed to a command that failed (exit code 1). */
export class UsageError extends Error {}
