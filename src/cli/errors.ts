/**
 * How the CLI ends: exit codes and the one line a failure prints on stderr. A refusal of the API is shown
 * with the API's own message (KbApiError); nothing prints a stack trace unless KB_DEBUG is set.
 */
import { KbApiError } from '../client/index.ts';

/** Exit codes (docs/cli.md lists them for users). */
export const EXIT = {
  ok: 0,
  /** The API refused the request, the service could not be reached, or the job failed or was cancelled. */
  failed: 1,
  /** The command line or the environment was wrong (unknown command, missing KB_API_KEY). */
  usage: 2,
  /** The job finished but some documents failed (a sync ending `incomplete`). */
  incomplete: 3,
  /** Interrupted (Ctrl-C) while following a job; the job goes on in the service. */
  interrupted: 130,
} as const;

/** A failure the CLI explains in one line, with its exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.failed) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
    this.name = 'UsageError';
  }
}

/** The service did not answer at all (not running, wrong --url, network). */
export class ServiceUnreachable extends CliError {
  constructor(url: string, cause: unknown) {
    const reason = causeText(cause);
    super(
      `cannot reach the service at ${url}${reason ? ` (${reason})` : ''}; is it running (kb serve)? ` +
        'Set --url or KB_URL to where it listens.',
    );
    this.name = 'ServiceUnreachable';
  }
}

function causeText(err: unknown): string {
  const inner = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (inner && typeof inner === 'object' && 'code' in inner && typeof inner.code === 'string')
    return inner.code;
  return inner instanceof Error ? inner.message : '';
}

/** The line a failure prints (without the `kb: ` prefix) and its exit code. */
export function describeFailure(err: unknown): { message: string; exitCode: number } {
  if (err instanceof KbApiError)
    return { message: `${err.message} (${err.status} ${err.code})`, exitCode: EXIT.failed };
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode };
  const message = err instanceof Error ? err.message : String(err);
  return { message: `unexpected error: ${message}`, exitCode: EXIT.failed };
}
