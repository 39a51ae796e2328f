/** The Bulletin API of connector.ts on loopback: `/v1/me` and two pages of `/v1/posts`. */
import { type FakeServer, startFakeServer } from '../../fakes/fake-server.ts';

export const BULLETIN_KEY = 'bulletin-key-0123456789';

export function startFakeBulletin(): Promise<FakeServer> {
  const posts = [
    { id: 'p1', title: 'Opening hours', body: 'The office opens at eight on weekdays.' },
    { id: 'p2', title: 'Parking', body: 'Visitors park on level minus two.' },
    { id: 'p3', title: 'Lunch', body: 'The canteen serves lunch from noon.' },
  ];
  return startFakeServer((req) => {
    if (req.headers['authorization'] !== `Key ${BULLETIN_KEY}`)
      return { status: 401, body: { error: 'bad key' } };
    if (req.path === '/v1/me') return { status: 200, body: { board: 'office' } };
    if (req.path === '/v1/posts') {
      const start = req.query.get('cursor') === 'c2' ? 2 : 0;
      return {
        status: 200,
        body: { posts: posts.slice(start, start + 2), next_cursor: start === 0 ? 'c2' : null },
      };
    }
    return { status: 404, body: { error: 'not found' } };
  });
}
