import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { extractPage } from '../../src/crawler/extract.ts';
import { isLinkListPage, linkStats } from '../../src/ingest/link-lists.ts';

const host = 'https://docs.example.com';

/** A generated index: one entry per API, each a link, as documentation generators write them. */
function generatedIndex(): string {
  const names = Array.from({ length: 80 }, (_, i) => `function_${i}`);
  return [
    '# Index – F',
    ...names.map(
      (n, i) => `- [${n}() (in module pkg.mod${i % 7})](${host}/library/mod${i % 7}.html#pkg.mod.${n})`,
    ),
  ].join('\n');
}

/** A table of contents: nested lists of chapter titles. */
function tableOfContents(): string {
  const lines = ['# Contents'];
  for (let c = 1; c <= 12; c++) {
    lines.push(`- [${c}. Chapter about topic ${c}](${host}/tutorial/chapter${c}.html)`);
    for (let s = 1; s <= 4; s++)
      lines.push(`  - [${c}.${s}. Section ${s}](${host}/tutorial/chapter${c}.html#s${s})`);
  }
  return lines.join('\n');
}

/** Release notes: every line mentions an API and links its pull request and author. */
function releaseNotes(): string {
  const lines = ['# Release notes'];
  for (let v = 0; v < 40; v++) {
    lines.push(`## 0.${100 - v}.0`, '### Fixes');
    for (let k = 0; k < 5; k++) {
      lines.push(
        `* 🐛 Fix handling of \`Depends()\` in nested routers when the dependency raises. PR [#${v * 10 + k}](https://github.com/org/repo/pull/${v * 10 + k}) by [@user${k}](https://github.com/user${k}).`,
      );
    }
  }
  return lines.join('\n\n');
}

describe('isLinkListPage', () => {
  test('a generated index, a table of contents and a sitemap of bare URLs are lists of links', () => {
    const sitemap = Array.from({ length: 30 }, (_, i) => `- <${host}/page-${i}.html>`).join('\n');
    for (const page of [generatedIndex(), tableOfContents(), sitemap])
      assert.equal(isLinkListPage(page), true);
    const s = linkStats(generatedIndex());
    assert.equal(s.links, 80);
    assert.ok(s.linkChars / s.textChars > 0.9);
  });

  test('content with many links is not: release notes, a prose page full of references, a short stub', () => {
    assert.equal(isLinkListPage(releaseNotes()), false);
    const prose = Array.from(
      { length: 30 },
      (_, i) =>
        `To declare a body, use [Pydantic](https://docs.pydantic.dev/${i}) models as shown in [the tutorial](${host}/t${i}), then call it.`,
    ).join('\n\n');
    assert.equal(isLinkListPage(prose), false);
    assert.equal(isLinkListPage(`# Package\n\nOverview. See [the index](${host}/genindex.html).`), false);
  });

  const site = fileURLToPath(new URL('../../../shared/data/sites/fastapi-docs', import.meta.url));
  test('the FastAPI pages with the most links and the most text in links are content', {
    skip: !existsSync(site),
  }, () => {
    for (const page of [
      'release-notes.html',
      'index.html',
      'how-to/testing-database.html',
      'how-to/general.html',
    ]) {
      const html = readFileSync(`${site}/${page}`, 'utf8');
      const { markdown } = extractPage(html, `http://127.0.0.1:1/${page}`);
      assert.equal(isLinkListPage(markdown), false, page);
    }
  });
});
