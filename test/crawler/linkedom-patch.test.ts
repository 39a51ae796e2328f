/**
 * The crawler's patched linkedom (patches/linkedom+0.18.15.patch, patches/README.md): nodes get their
 * listener map on the first addEventListener instead of at construction. Events must work as before,
 * and the patch must be what the install loaded (an upgrade without a redone patch loses the speed).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import test from 'node:test';
import { parseHTML } from 'linkedom';

test('the installed linkedom carries the patch', () => {
  const pkg = createRequire(import.meta.url).resolve('linkedom/package.json');
  const source = readFileSync(join(dirname(pkg), 'esm/interface/event-target.js'), 'utf8');
  assert.match(source, /kb patch/, 'npm install runs patch-package (postinstall); run it again');
});

test('events reach their listeners on a parsed page, once-listeners and removal included', () => {
  const { document } = parseHTML('<html><body><main><p id="p">text</p></main></body></html>');
  const p = document.getElementById('p')!;
  const main = document.querySelector('main')!;
  const ping = () => new document.defaultView!.Event('ping', { bubbles: true });
  const seen: string[] = [];
  // Never listened on: removal and dispatch find no listener map and must not throw.
  main.removeEventListener('ping', () => {});
  assert.equal(p.dispatchEvent(ping()), true);

  const onP = () => seen.push('p');
  p.addEventListener('ping', onP);
  p.addEventListener('ping', () => seen.push('p-once'), { once: true });
  main.addEventListener('ping', () => seen.push('main'));
  p.dispatchEvent(ping());
  p.removeEventListener('ping', onP);
  p.dispatchEvent(ping());
  assert.deepEqual(seen, ['p', 'p-once', 'main', 'main']);
});
