/** Numbers, durations and small tables as the CLI prints them for people (never for --json). */

const INTEGER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** `1,234` */
export function count(n: number): string {
  return INTEGER.format(n);
}

/** `0.4`, `12.3`, `1,234`: a rate with a useful number of digits. */
export function rate(perSecond: number): string {
  if (perSecond >= 100) return count(perSecond);
  return perSecond >= 10 ? perSecond.toFixed(1) : perSecond.toFixed(perSecond >= 1 ? 1 : 2);
}

/** `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.round(s);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')} min`;
}

/** An estimate, in whole seconds below a minute (`ETA 8 s`, `ETA 4 min 05 s`). */
export function eta(seconds: number): string {
  return seconds < 60 ? `${Math.max(0, Math.ceil(seconds))} s` : duration(seconds * 1000);
}

/** A clock for elapsed time on a progress line: `0:07`, `12:34`, `1:02:03`. */
export function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h > 0 ? 2 : 1, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** `120 seen, 100 stored, 0 failed` from ordered labelled counts. */
export function counts(details: Record<string, number>): string {
  return Object.entries(details)
    .map(([label, n]) => `${count(n)} ${label}`)
    .join(', ');
}

/** One line of text, at most `max` characters (`…` when cut). */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * Rows as columns padded to their widest cell; the last column is not padded (it may be long: a title).
 * Widths count UTF-16 units, which is right for the ids, numbers and statuses padded here.
 */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
    .join('\n');
}

/** A job's warning as the summaries read it (crawl and sync jobs alike). */
export interface WarningLike {
  code: string;
  message: string;
  count: number;
}

/** Warnings shown in a summary; `--json` has them all. */
const SHOWN_WARNINGS = 10;

/**
 * A job's warnings as summary lines (`  warnings   code: message`), the first few of them and how many
 * more there are; none when the job has none. `total` counts every warning, repeats included.
 */
export function warningLines(
  warnings: readonly WarningLike[] | undefined,
  total: number | undefined,
): string[] {
  const listed = warnings ?? [];
  if (listed.length === 0) return [];
  const shown = listed.slice(0, SHOWN_WARNINGS);
  const lines = shown.map((w, i) => {
    const times = w.count > 1 ? ` (${count(w.count)} times)` : '';
    return `${i === 0 ? '  warnings   ' : '             '}${w.code}${times}: ${oneLine(w.message, 300)}`;
  });
  const inShown = shown.reduce((n, w) => n + w.count, 0);
  const more = Math.max(0, (total ?? inShown) - inShown);
  if (more > 0) lines.push(`             ... and ${count(more)} more (--json lists up to 50)`);
  return lines;
}
