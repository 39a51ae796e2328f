/** A job's warnings (crawl and sync jobs): problems the person can act on, shown with the job, not folded away. */
import { formatNumber } from './ui.tsx';

/** A warning as crawl and sync jobs carry it. */
export interface JobWarningLike {
  code: string;
  message: string;
  subject: string;
  count: number;
}

export function JobWarnings(props: {
  warnings: readonly JobWarningLike[] | undefined;
  total: number | undefined;
}) {
  const warnings = props.warnings ?? [];
  if (warnings.length === 0) return null;
  const total = Math.max(
    props.total ?? 0,
    warnings.reduce((n, w) => n + w.count, 0),
  );
  return (
    <div class="warnings">
      <strong>
        {formatNumber(total)} warning{total === 1 ? '' : 's'}
      </strong>
      <ul class="warning-list">
        {warnings.map((w) => (
          <li key={`${w.code} ${w.subject}`} data-warning={w.code}>
            <code>{w.code}</code> {w.message}
            {w.count > 1 ? ` (${formatNumber(w.count)} times)` : ''}
          </li>
        ))}
      </ul>
    </div>
  );
}
