/**
 * Zendesk content to the item's markdown: Help Center articles (HTML bodies under their
 * `Category > Section` context) and solved tickets (subject, a status line, the public comments in
 * order). Internal notes never reach this module's output: {@link renderTicket} drops every comment that
 * is not public, and never reads the ticket's `description` (its first comment, which may be internal).
 */
import { htmlToMarkdown } from '../../lib/html-to-markdown.ts';
import type { Article, Comment, Ticket } from './schemas.ts';

/** The separator of the heading context line: `Category > Section`. */
const CONTEXT_SEPARATOR = ' > ';

/** Escapes what would make one line of text into markup: inline markers and a leading block marker. */
export function plainLine(text: string): string {
  const line = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\\`*_[\]<]/g, (c) => `\\${c}`);
  return line.replace(/^(\d+)([.)])(?=\s|$)/, '$1\\$2').replace(/^([#>+=-])/, '\\$1');
}

/** A title as heading text: one line, with a trailing `#` run escaped rather than read as a closing sequence. */
function headingText(title: string): string {
  return plainLine(title).replace(/(^|\s)(#+)$/, '$1\\$2') || 'Untitled';
}

/**
 * An article's markdown: the line `Category > Section` (parent sections between them, outermost first)
 * that tells every chunk where the article sits, the title as the first heading, then the body.
 */
export function renderArticle(
  article: Pick<Article, 'title' | 'body' | 'html_url'>,
  context: readonly string[],
): string {
  const parts: string[] = [];
  const trail = context.map(plainLine).filter(Boolean);
  if (trail.length > 0) parts.push(trail.join(CONTEXT_SEPARATOR));
  parts.push(`# ${headingText(article.title)}`);
  const body = article.body ? htmlToMarkdown(article.body, { baseUrl: article.html_url }).trim() : '';
  if (body) parts.push(body);
  return parts.join('\n\n');
}

/** An ISO time as `2024-05-01 10:00 UTC`; anything unreadable as it came. */
export function readableTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  return `${t.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A ticket's title: its subject, else its number. */
export function ticketTitle(ticket: Pick<Ticket, 'id' | 'subject' | 'raw_subject'>): string {
  const subject = (ticket.subject ?? ticket.raw_subject ?? '').replace(/\s+/g, ' ').trim();
  return subject || `Ticket #${ticket.id}`;
}

/**
 * A solved or closed ticket's markdown: the subject heading, one status line, then each public comment
 * in the order it was written, headed by its author and time. Internal notes (`public: false`) are left
 * out entirely, attachments included.
 */
export function renderTicket(
  ticket: Ticket,
  comments: readonly Comment[],
  userNames: ReadonlyMap<number, string>,
  ticketUrl: string,
): string {
  const status = [
    `Ticket #${ticket.id}`,
    ticket.status,
    ticket.priority ? `priority ${ticket.priority}` : undefined,
    ticket.created_at ? `created ${readableTime(ticket.created_at)}` : undefined,
    `updated ${readableTime(ticket.updated_at)}`,
  ].filter((s): s is string => Boolean(s));
  const parts = [`# ${headingText(ticketTitle(ticket))}`, plainLine(status.join(' · '))];
  const visible = comments
    .filter((c) => c.public === true)
    .map((c, i) => ({ c, i }))
    // Written order; Zendesk lists them so already, the index keeps equal times as listed.
    .sort((a, b) => Date.parse(a.c.created_at) - Date.parse(b.c.created_at) || a.i - b.i);
  for (const { c } of visible) {
    const author =
      c.author_id == null ? 'Unknown author' : (userNames.get(c.author_id) ?? `User ${c.author_id}`);
    parts.push(`## ${headingText(`${author} · ${readableTime(c.created_at)}`)}`);
    const body = commentBody(c, ticketUrl);
    if (body) parts.push(body);
    const files = (c.attachments ?? []).map((a) => `[${plainLine(a.file_name)}](${a.content_url})`);
    if (files.length > 0) parts.push(`Attachments: ${files.join(', ')}`);
  }
  return parts.join('\n\n');
}

/** `html_body` as markdown, else the plain text Zendesk keeps beside it. */
function commentBody(c: Comment, baseUrl: string): string {
  if (c.html_body?.trim()) return htmlToMarkdown(c.html_body, { baseUrl }).trim();
  return (c.plain_body ?? c.body ?? '').trim();
}
