/**
 * Reusable content: blocks written once and referenced from many pages. A page's markdown holds only the
 * reference, `{% include "<path>" %}` (GitBook's markdown form, as in Git Sync, where reusable content
 * lives in `.gitbook/includes/`), so without expanding it the text is missing from every page that uses it.
 *
 * A reference is matched to the revision's reusable contents (`RevisionReusableContent`) by its Git path,
 * by its id, or by its file name against the content's title; the body is read once per pass from the
 * revision (`/reusable-contents/{id}/document`, JSON) and written in its place.
 *
 * The reusable contents a page used are part of its version (see {@link versionWithReusable}), so editing
 * one fetches again exactly the pages that include it.
 */
import { createHash } from 'node:crypto';
import { documentToMarkdown } from './document.ts';
import { type ReusableContent, reusableContentSchema } from './schemas.ts';

/** The revision's reusable contents by id, with what identifies each one's current body. */
export class ReusableIndex {
  readonly #byId = new Map<string, ReusableContent>();
  readonly #revision: string;

  constructor(raw: readonly unknown[], revision: string) {
    this.#revision = revision;
    for (const item of raw) {
      const parsed = reusableContentSchema.safeParse(item);
      if (parsed.success) this.#byId.set(parsed.data.id, parsed.data);
    }
  }

  get size(): number {
    return this.#byId.size;
  }

  /** The reusable content an include target names, or undefined. */
  match(target: string): ReusableContent | undefined {
    const path = target.split(/[?#]/, 1)[0]!.replace(/\\/g, '/');
    const normalized = path.replace(/^(?:\.{1,2}\/)+/, '').replace(/^\/+/, '');
    const segments = normalized.split('/');
    const file = (segments.at(-1) ?? '').replace(/\.md$/i, '');
    const all = [...this.#byId.values()];
    return (
      all.find((rc) => {
        const git = rc.git?.path?.replace(/^\/+/, '');
        return git !== undefined && (normalized === git || normalized.endsWith(`/${git}`));
      }) ??
      all.find((rc) => segments.includes(rc.id) || file === rc.id) ??
      all.find((rc) => file !== '' && slug(rc.title) === file)
    );
  }

  /** What changes when the content's body changes: its document id and Git blob, else the revision. */
  marker(id: string): string {
    const rc = this.#byId.get(id);
    if (!rc) return 'missing';
    const parts = [rc.document, rc.git?.oid].filter(Boolean);
    return parts.length ? parts.join(':') : `revision:${this.#revision}`;
  }
}

function slug(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

// `{% include "target" %}`, `{% include 'target' %}` or `{% include target %}`, on a line of its own or
// inside one.
const INCLUDE = /\{%-?\s*include\s+(?:"([^"]+)"|'([^']+)'|([^\s%]+))\s*-?%\}/g;
const HAS_INCLUDE = new RegExp(INCLUDE.source);

/** What {@link expandReusable} found: the markdown with bodies in place, and the contents it used. */
export interface Expanded {
  markdown: string;
  /** Ids of the reusable contents the page includes, sorted (also those whose body was missing). */
  used: string[];
  /** Include targets that match no reusable content of the revision. */
  unmatched: string[];
}

/**
 * Replaces each include of a reusable content with its body (GitBook-flavoured markdown), read through
 * `body` (the caller caches it per pass). Includes inside code are left alone. A body that is gone (404)
 * is `undefined`: the include gives nothing.
 */
export async function expandReusable(
  markdown: string,
  index: ReusableIndex,
  body: (id: string) => Promise<string | undefined>,
): Promise<Expanded> {
  const used = new Set<string>();
  const unmatched: string[] = [];
  if (!markdown.includes('include')) return { markdown, used: [], unmatched };
  const bodies = new Map<string, string | undefined>();
  const lines = markdown.split('\n');
  let fence: string | null = null;
  const out: string[] = [];
  for (const line of lines) {
    const fenceMark = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (fenceMark && fenceMark[0] === fence[0] && fenceMark.length >= fence.length) fence = null;
      out.push(line);
      continue;
    }
    if (fenceMark) {
      fence = fenceMark;
      out.push(line);
      continue;
    }
    if (!HAS_INCLUDE.test(line)) {
      out.push(line);
      continue;
    }
    const indent = /^\s*/.exec(line)![0];
    let text = '';
    let last = 0;
    for (const m of line.matchAll(INCLUDE)) {
      text += line.slice(last, m.index);
      last = m.index + m[0].length;
      const target = m[1] ?? m[2] ?? m[3] ?? '';
      const rc = index.match(target);
      if (!rc) {
        // Left as it is: the renderer drops an include it cannot show.
        unmatched.push(target);
        text += m[0];
        continue;
      }
      used.add(rc.id);
      if (!bodies.has(rc.id)) bodies.set(rc.id, await body(rc.id));
      const content = bodies.get(rc.id);
      if (content) text += `\n${content.replace(/^(?=.)/gm, indent)}\n`;
    }
    text += line.slice(last);
    out.push(text);
  }
  return { markdown: out.join('\n'), used: [...used].sort(), unmatched };
}

/** The markdown of a reusable content's JSON document. */
export function reusableBody(nodes: readonly unknown[]): string {
  return documentToMarkdown(nodes);
}

/**
 * A page's version with the reusable contents it used: `<page>~<id,id>~<digest of their markers>`. The
 * ids stay readable in the stored version, so the next pass can tell, before fetching the page, whether
 * any of them changed.
 */
export function versionWithReusable(base: string, used: readonly string[], index: ReusableIndex): string {
  if (used.length === 0) return base;
  return `${base}~${used.join(',')}~${markersDigest(used, index)}`;
}

/** Whether a stored version is the page's current one: same page, and same bodies of what it used. */
export function isCurrentVersion(
  stored: string | null | undefined,
  base: string,
  index: ReusableIndex,
): boolean {
  if (!stored) return false;
  const [page, ids, digest] = stored.split('~');
  if (page !== base) return false;
  if (ids === undefined) return true;
  return digest === markersDigest(ids.split(','), index);
}

function markersDigest(ids: readonly string[], index: ReusableIndex): string {
  const markers = ids.map((id) => [id, index.marker(id)]);
  return createHash('sha256').update(JSON.stringify(markers)).digest('base64url').slice(0, 16);
}
