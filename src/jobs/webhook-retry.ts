/**
 * When a failed webhook delivery is tried again: the schedule Standard Webhooks' reference service (Svix)
 * publishes, after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. Eight attempts over
 * about 27.5 hours, so an endpoint down for a day still gets its events.
 */

/** The waits after the 1st, 2nd... failed attempt. */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/**
 * The wait before the next attempt after `failedAttempts` attempts failed in a row (1 after the first),
 * or null when the delivery is given up.
 */
export function webhookRetryDelayMs(
  failedAttempts: number,
  schedule: readonly number[] = WEBHOOK_RETRY_DELAYS_MS,
): number | null {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1) return 0;
  return schedule[failedAttempts - 1] ?? null;
}

/** Whether an answer to a delivery counts as received: any 2xx. Redirects are not followed. */
export function isDelivered(status: number): boolean {
  return status >= 200 && status < 300;
}
