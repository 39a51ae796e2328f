/**
 * The support_desk (Zendesk) sync across languages and brands, against the fake account: every
 * translation an item tagged with its locale, change and deletion detection per translation (an edit
 * that moves only the translation, a translation removed or back to draft, an article archived with its
 * translations, a language disabled), every brand's help center when the connection asks (`brands`),
 * the option's validation, and what an unchanged sync costs beside the first.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { supportDeskConnector } from '../../src/connectors/support-desk/index.ts';
import { ARTICLES_TABLE, type SupportDeskCursor } from '../../src/connectors/support-desk/sync.ts';
import type { SourceDocument } from '../../src/connectors/types.ts';
import type { RecordedRequest } from '../fakes/fake-server.ts';
import { type FakeZendesk, FakeZendeskAccount, startFakeZendesk, ZENDESK_GOOD } from '../fakes/zendesk.ts';
import { SyncedSet, throwsInvalid } from './helpers.ts';

const input = { subdomain: 'acme', ...ZENDESK_GOOD };

let fake: FakeZendesk | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(account: FakeZendeskAccount, extra: Record<string, unknown> = {}) {
  fake = await startFakeZendesk({ account });
  // The operator's template names the subdomain, so other brands' help centers are reachable.
  const set = new SyncedSet<SupportDeskCursor>(
    supportDeskConnector,
    { ...input, ...extra },
    `${fake.url}/{subdomain}`,
  );
  return { fake, set };
}

/** Three articles in English; French for two of them, German for one. */
function buildAccount() {
  const account = new FakeZendeskAccount();
  const section = account.addSection(account.addCategory('Guides'), 'Basics');
  const reset = account.addArticle({ section, title: 'Resetting your password' });
  const invoices = account.addArticle({ section, title: 'Downloading invoices' });
  const sso = account.addArticle({ section, title: 'Single sign-on' });
  account.addTranslation(reset.id, 'fr', { title: 'Réinitialiser votre mot de passe' });
  account.addTranslation(invoices.id, 'fr', { title: 'Télécharger les factures' });
  account.addTranslation(reset.id, 'de', { title: 'Passwort zurücksetzen' });
  return { account, section, reset, invoices, sso };
}

const keys = (docs: Iterable<{ externalId: string }>) => [...docs].map((d) => d.externalId).sort();
const heldKeys = (set: SyncedSet<SupportDeskCursor>) => keys(set.held.values());
const isListing = (locale: string) => (r: RecordedRequest) =>
  r.path.endsWith(`/api/v2/help_center/${locale}/articles`) && r.query.get('page[size]') !== null;
const isBrandList = (r: RecordedRequest) => r.path.endsWith('/api/v2/brands');
const since = (f: FakeZendesk, from: number, test: (r: RecordedRequest) => boolean) =>
  f.requests.slice(from).filter(test);

function doc(set: SyncedSet<SupportDeskCursor>, key: string): SourceDocument {
  const found = set.held.get(`${ARTICLES_TABLE}:${key}`);
  assert.ok(found, `a held item ${key}: ${heldKeys(set).join(' ')}`);
  return found;
}

describe('support_desk (Zendesk): every language', () => {
  it('syncs each translation as an item tagged with its locale, at its own URL; the default stays as it was', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    const [r, i, o] = [s.reset.id, s.invoices.id, s.sso.id];
    assert.deepEqual(heldKeys(set), [`${i}`, `${i}:fr`, `${o}`, `${r}`, `${r}:de`, `${r}:fr`].sort());
    const fr = doc(set, `${r}:fr`);
    assert.equal(fr.title, 'Réinitialiser votre mot de passe');
    assert.equal(fr.url, `https://acme.zendesk.com/hc/fr/articles/${r}-R-initialiser-votre-mot-de-passe`);
    assert.deepEqual(fr.tags, ['support_desk', 'locale:fr', 'Guides', 'Basics']);
    assert.equal(
      fr.markdown,
      'Guides > Basics\n\n# Réinitialiser votre mot de passe\n\nRéinitialiser votre mot de passe.',
    );
    const en = doc(set, `${r}`);
    assert.equal(en.url, `https://acme.zendesk.com/hc/en-us/articles/${r}-Resetting-your-password`);
    assert.deepEqual(en.tags, ['support_desk', 'locale:en-us', 'Guides', 'Basics']);
    assert.ok(fake.requests.some((q) => q.path.endsWith('/api/v2/help_center/locales')));
    assert.equal(since(fake, 0, isListing('fr')).length, 1, 'a first pass lists each other language');

    const mark = fake.requests.length;
    const again = await set.sync();
    assert.deepEqual([again.documents, again.deleted, again.failures], [[], [], []]);
    assert.equal(since(fake, mark, isListing('fr')).length, 0, 'an unchanged language is not listed');
    // The count (with the newest update) and a probe per other language (those the last pass saw): the
    // categories, sections and languages are the last pass's, and the export has nothing to show.
    assert.equal(again.requests, 3);
    assert.ok(!fake.requests.slice(mark).some((q) => q.path.endsWith('/api/v2/help_center/locales')));
  });

  it('between two syncs: a translation edited alone, added, back to draft and removed; an article archived takes its translations', async () => {
    const s = buildAccount();
    const [r, i, o] = [s.reset.id, s.invoices.id, s.sso.id];
    const { fake, set } = await start(s.account);
    await set.sync();
    const articleUpdated = s.account.article(r).updated_at;

    s.account.editTranslation(r, 'fr', { title: 'Réinitialiser le mot de passe' });
    assert.equal(s.account.article(r).updated_at, articleUpdated, 'the article itself did not move');
    s.account.addTranslation(o, 'de', { title: 'Einmalanmeldung' });
    s.account.editTranslation(r, 'de', { draft: true });
    const mark = fake.requests.length;
    const second = await set.sync();
    assert.deepEqual(second.failures, []);
    assert.deepEqual(keys(second.documents), [`${o}:de`, `${r}:fr`].sort());
    assert.equal(doc(set, `${r}:fr`).title, 'Réinitialiser le mot de passe');
    assert.deepEqual(keys(second.deleted), [`${r}:de`]);
    assert.equal(since(fake, mark, isListing('en-us')).length, 0);

    s.account.deleteTranslation(i, 'fr');
    const third = await set.sync();
    assert.deepEqual([keys(third.documents), keys(third.deleted)], [[], [`${i}:fr`]]);

    s.account.archiveArticle(r);
    const fourth = await set.sync();
    assert.deepEqual(keys(fourth.deleted), [`${r}`, `${r}:fr`].sort(), 'the article and its translations');
    assert.deepEqual(heldKeys(set), [`${i}`, `${o}`, `${o}:de`].sort());
    const fifth = await set.sync();
    assert.deepEqual([fifth.documents, fifth.deleted], [[], []]);
  });

  it("an article's own change (restricted) reaches its translations through the article's translations", async () => {
    const s = buildAccount();
    const r = s.reset.id;
    const { fake, set } = await start(s.account);
    await set.sync();
    s.account.restrictArticle(r, 360_000_555_000);
    const mark = fake.requests.length;
    const second = await set.sync();
    assert.deepEqual(keys(second.documents), [`${r}`, `${r}:de`, `${r}:fr`].sort());
    assert.ok(second.documents.every((d) => d.visibility === 'private'));
    assert.equal(
      since(fake, mark, (q) => q.path.endsWith(`/articles/${r}/translations`)).length,
      1,
      "one request for the article's translations",
    );
    assert.equal(since(fake, mark, isListing('fr')).length, 0);
  });

  it('a language the help center disables takes its items: its probe answers 404, so the languages are read again', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    await set.sync();
    s.account.disableLocale('fr');
    // Enabled meanwhile, with no article changed: only a read of the languages shows it.
    s.account.addTranslation(s.sso.id, 'es', { title: 'Inicio de sesión único' });
    const mark = fake.requests.length;
    const second = await set.sync();
    assert.deepEqual(second.failures, []);
    assert.deepEqual(keys(second.deleted), [`${s.invoices.id}:fr`, `${s.reset.id}:fr`].sort());
    assert.deepEqual(keys(second.documents), [`${s.sso.id}:es`]);
    const asked = fake.requests.slice(mark);
    assert.ok(
      asked.some(
        (q) => q.path.endsWith('/api/v2/help_center/fr/articles') && q.query.get('per_page') === '1',
      ),
    );
    assert.equal(asked.filter((q) => q.path.endsWith('/api/v2/help_center/locales')).length, 1);
    const third = await set.sync();
    assert.deepEqual([third.documents, third.deleted, third.failures], [[], [], []]);
    // The count, the probes of de and es.
    assert.equal(third.requests, 3);
  });

  it('a changed count reads the languages again: one enabled meanwhile is synced', async () => {
    const s = buildAccount();
    const { fake, set } = await start(s.account);
    await set.sync();
    s.account.addTranslation(s.sso.id, 'es', { title: 'Inicio de sesión único' });
    s.account.archiveArticle(s.invoices.id);
    const mark = fake.requests.length;
    const second = await set.sync();
    assert.deepEqual(keys(second.documents), [`${s.sso.id}:es`]);
    assert.deepEqual(keys(second.deleted), [`${s.invoices.id}`, `${s.invoices.id}:fr`].sort());
    assert.equal(since(fake, mark, (q) => q.path.endsWith('/api/v2/help_center/locales')).length, 1);
  });

  it('a reset re-reads every language and ends with exactly the source set', async () => {
    const s = buildAccount();
    const { set } = await start(s.account);
    await set.sync();
    s.account.deleteTranslation(s.reset.id, 'de');
    const reset = await set.sync('full');
    assert.deepEqual(reset.failures, []);
    assert.equal(reset.documents.length, 5);
    assert.ok(!heldKeys(set).includes(`${s.reset.id}:de`));
  });
});

describe('support_desk (Zendesk): every brand', () => {
  function withBrands() {
    const s = buildAccount();
    const support = s.account.addBrand('support', { name: 'Acme Support' });
    const hc = support.account;
    const section = hc.addSection(hc.addCategory('Help'), 'Start');
    const welcome = hc.addArticle({ section, title: 'Welcome' });
    hc.addTranslation(welcome.id, 'es', { title: 'Bienvenida' });
    const legacy = s.account.addBrand('legacy', { help_center_state: 'disabled' });
    legacy.account.addArticle({
      section: legacy.account.addSection(legacy.account.addCategory('Old'), 'Old'),
      title: 'Old',
    });
    const staging = s.account.addBrand('staging', { help_center_state: 'restricted' });
    staging.account.addArticle({
      section: staging.account.addSection(staging.account.addCategory('Draft'), 'Draft'),
      title: 'Not yet',
    });
    return { ...s, support, welcome };
  }

  it('brands: "all" syncs every live help center on its own subdomain, tagged with its brand', async () => {
    const s = withBrands();
    const { fake, set } = await start(s.account, { brands: 'all' });
    const first = await set.sync();
    assert.deepEqual(first.failures, []);
    const w = s.welcome.id;
    assert.ok(heldKeys(set).includes(`support/${w}`));
    assert.ok(heldKeys(set).includes(`support/${w}:es`));
    assert.equal(first.documents.filter((d) => d.title === 'Old' || d.title === 'Not yet').length, 0);
    const welcome = doc(set, `support/${w}`);
    assert.equal(welcome.url, `https://support.zendesk.com/hc/en-us/articles/${w}-Welcome`);
    assert.deepEqual(welcome.tags, ['support_desk', 'locale:en-us', 'brand:support', 'Help', 'Start']);
    assert.deepEqual(doc(set, `support/${w}:es`).tags.slice(0, 3), [
      'support_desk',
      'locale:es',
      'brand:support',
    ]);
    assert.deepEqual(doc(set, `${s.reset.id}`).tags.slice(0, 3), [
      'support_desk',
      'locale:en-us',
      'brand:acme',
    ]);
    assert.ok(fake.requests.some((q) => q.path === '/acme/api/v2/brands'));
    assert.ok(fake.requests.some((q) => q.path === '/support/api/v2/help_center/incremental/articles'));
    assert.ok(!fake.requests.some((q) => q.path.startsWith('/legacy/') || q.path.startsWith('/staging/')));
    assert.ok(first.cursor?.brands?.['support'], 'each brand keeps its own export position');

    let mark = fake.requests.length;
    const again = await set.sync();
    assert.deepEqual([again.documents, again.deleted, again.failures], [[], [], []]);
    assert.equal(since(fake, mark, isBrandList).length, 0, 'the help centers the last read found');

    // The brand's help center goes dark: it answers 404, so the brand list is read again; its items leave,
    // the others stay.
    s.support.help_center_state = 'disabled';
    mark = fake.requests.length;
    const third = await set.sync();
    assert.deepEqual(third.failures, []);
    assert.deepEqual(keys(third.deleted), [`support/${w}`, `support/${w}:es`].sort());
    assert.ok(heldKeys(set).includes(`${s.reset.id}`));
    assert.equal(since(fake, mark, isBrandList).length, 1);
    assert.deepEqual(third.cursor?.brandList?.subdomains, ['acme']);
  });

  it('a list of brands syncs those; a brand the credentials cannot see is a failure, not the end', async () => {
    const s = withBrands();
    const { set } = await start(s.account, { brands: ['support.zendesk.com', 'nosuch'] });
    const first = await set.sync();
    assert.ok(
      heldKeys(set).every((k) => k.startsWith('support/')),
      heldKeys(set).join(' '),
    );
    assert.equal(first.failures.length, 1);
    assert.match(first.failures[0]!.error.message, /no brand "nosuch"/);
    // A brand that could not be read is told every sync: the list is read again until it resolves.
    const again = await set.sync();
    assert.equal(again.failures.length, 1);
    assert.match(again.failures[0]!.error.message, /no brand "nosuch"/);
  });

  it('an unchanged sync reads no brand list; a brand added shows at the listing interval, or when the option changes', async () => {
    const s = withBrands();
    const { fake, set } = await start(s.account, { brands: 'all' });
    const first = await set.sync();
    let mark = fake.requests.length;
    const again = await set.sync();
    assert.deepEqual([again.documents, again.deleted, again.failures], [[], [], []]);
    assert.equal(since(fake, mark, isBrandList).length, 0);
    // Per help center its count, and a probe per other language: acme (fr, de) 3, support (es) 2.
    assert.equal(again.requests, 5);
    console.log(
      `# support_desk with brands "all" (2 help centers, 4 languages): first sync ${first.requests} requests, unchanged ${again.requests}`,
    );
    // One request per language of each help center is the floor (a translation's edit moves nothing
    // else); these help centers hold three articles, so the first sync is small beside it.
    assert.equal(first.requests, 19);

    const docs = s.account.addBrand('docs', { name: 'Acme Docs' });
    const guide = docs.account.addArticle({
      section: docs.account.addSection(docs.account.addCategory('Docs'), 'Start'),
      title: 'Guide',
    });
    const third = await set.sync();
    assert.equal(third.documents.length, 0, 'no signal shows a new brand before the list is read again');

    // A day after the list was read (the default KB_SUPPORT_DESK_LISTING_HOURS), it is read again.
    const remembered = set.cursor!.brandList!;
    set.cursor = { ...set.cursor!, brandList: { ...remembered, readAt: remembered.readAt - 24 * 3_600_000 } };
    mark = fake.requests.length;
    const fourth = await set.sync();
    assert.equal(since(fake, mark, isBrandList).length, 1);
    assert.deepEqual(keys(fourth.documents), [`docs/${guide.id}`]);
    assert.deepEqual(fourth.cursor?.brandList?.subdomains.sort(), ['acme', 'docs', 'support']);

    // Another option reads the list at once: the same connection, now naming one brand.
    const narrowed = new SyncedSet<SupportDeskCursor>(
      supportDeskConnector,
      { ...input, brands: ['support'] },
      `${fake.url}/{subdomain}`,
    );
    for (const [key, held] of set.held) narrowed.held.set(key, held);
    narrowed.cursor = set.cursor;
    mark = fake.requests.length;
    await narrowed.sync();
    assert.equal(since(fake, mark, isBrandList).length, 1);
    assert.ok(
      heldKeys(narrowed).every((k) => k.startsWith('support/')),
      heldKeys(narrowed).join(' '),
    );
  });

  it("without the option, only the subdomain's own help center (no brands request)", async () => {
    const s = withBrands();
    const { fake, set } = await start(s.account);
    await set.sync();
    assert.ok(!fake.requests.some((q) => q.path.endsWith('/api/v2/brands')));
    assert.ok(heldKeys(set).every((k) => !k.includes('/')));
  });

  it('validates the option', () => {
    const parse = (brands: unknown) => supportDeskConnector.credentials.safeParse({ ...input, brands });
    assert.equal(parse('all').success, true);
    assert.equal(parse(['acme', 'support']).success, true);
    assert.equal(parse('some').success, false);
    assert.equal(parse([]).success, false);
    assert.equal(parse([42]).success, false);
    const creds = supportDeskConnector.normalize({ ...input, brands: ['Support.zendesk.com', 'support'] });
    assert.deepEqual(creds.brands, ['support']);
    throwsInvalid(() => supportDeskConnector.normalize({ ...input, brands: ['not a brand!'] }), 'brands');
  });
});

describe('support_desk (Zendesk): what an unchanged sync costs', () => {
  it('a fixed few requests whatever the size: one, and one per other language; at most a quarter of the first', async () => {
    const account = new FakeZendeskAccount();
    const sections = [1, 2, 3].map((n) =>
      account.addSection(account.addCategory(`Category ${n}`), `Section ${n}`),
    );
    for (let n = 1; n <= 500; n++) {
      const a = account.addArticle({ section: sections[n % 3]!, title: `Article ${n}` });
      account.addTranslation(a.id, 'fr', { title: `Article ${n} (fr)` });
      if (n % 2 === 0) account.addTranslation(a.id, 'de', { title: `Artikel ${n}` });
    }
    const { set } = await start(account);
    const first = await set.sync();
    assert.equal(first.documents.length, 500 + 500 + 250);
    const again = await set.sync();
    assert.deepEqual([again.documents, again.deleted], [[], []]);
    console.log(
      `# support_desk, 500 articles in 3 languages (1,250 items): first sync ${first.requests} requests, unchanged ${again.requests}`,
    );
    // The count and two probes.
    assert.equal(again.requests, 3);
    // The first: categories, sections, languages, the count, two probes, two export pages, and each other
    // language listed whole (5 + 3 pages).
    assert.equal(first.requests, 16);
    assert.ok(again.requests * 4 <= first.requests, 'an unchanged sync costs at most a quarter of the first');
  });
});
