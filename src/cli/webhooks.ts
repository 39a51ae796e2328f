/**
 * `kb webhooks add|list|rm|deliveries`: the organization's outbound webhook endpoints and their delivery
 * log, over /api/connect/webhook-endpoints. `add` prints the signing secret: the only time it is shown.
 */
import type { Command } from 'commander';
import { isWebhookEventType, ok, WEBHOOK_EVENT_TYPES, type WebhookEndpoint } from '../client/index.ts';
import { UsageError } from './errors.ts';
import { oneLine, table } from './format.ts';
import { collect, connect, intOption, printJson, type RemoteOptions, remoteOptions } from './remote.ts';

function describeEndpoint(e: WebhookEndpoint): string[] {
  const state = e.enabled ? (e.failingSince ? `failing since ${e.failingSince}` : 'enabled') : 'DISABLED';
  return [e.id, e.url, e.events ? e.events.join(',') : 'all events', state];
}

interface AddOptions extends RemoteOptions {
  event?: string[];
  description?: string;
}

interface DeliveriesOptions extends RemoteOptions {
  limit?: number;
}

function registerAdd(group: Command): void {
  remoteOptions(
    group
      .command('add <url>')
      .description('register an endpoint; prints its signing secret (shown this once)')
      .option(
        '--event <type>',
        `deliver only this event type (repeatable): ${WEBHOOK_EVENT_TYPES.join(', ')}`,
        collect,
      )
      .option('--description <text>', 'a note for people'),
  ).action(async (url: string, opts: AddOptions) => {
    const events = (opts.event ?? []).map((type) => {
      if (!isWebhookEventType(type))
        throw new UsageError(`unknown event type ${type}: one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
      return type;
    });
    const remote = connect(opts);
    const body = {
      url,
      ...(events.length ? { events } : {}),
      ...(opts.description ? { description: opts.description } : {}),
    };
    const e = await ok(remote.client.POST('/api/connect/webhook-endpoints', { body }));
    if (remote.json) return printJson(e);
    console.log(table([describeEndpoint(e)]));
    console.log(`secret ${e.secret}`);
    console.log(
      'Keep the secret now: it is not shown again. Verify each delivery with it (docs/webhooks.md).',
    );
  });
}

function registerList(group: Command): void {
  remoteOptions(group.command('list').description('the endpoints, with their state')).action(
    async (opts: RemoteOptions) => {
      const remote = connect(opts);
      const { endpoints } = await ok(remote.client.GET('/api/connect/webhook-endpoints'));
      if (remote.json) return printJson({ endpoints });
      if (endpoints.length === 0) return console.log('no webhook endpoints (kb webhooks add <url>)');
      console.log(table(endpoints.map(describeEndpoint)));
      for (const e of endpoints.filter((x) => x.disabledReason)) console.log(`${e.id}: ${e.disabledReason}`);
    },
  );
}

function registerRemove(group: Command): void {
  remoteOptions(group.command('rm <id>').description('delete an endpoint and its pending deliveries')).action(
    async (id: string, opts: RemoteOptions) => {
      const remote = connect(opts);
      const result = await ok(
        remote.client.DELETE('/api/connect/webhook-endpoints/{id}', { params: { path: { id } } }),
      );
      if (remote.json) return printJson(result);
      console.log(`deleted ${id}`);
    },
  );
}

function registerDeliveries(group: Command): void {
  remoteOptions(
    group
      .command('deliveries <id>')
      .description("an endpoint's recent deliveries, newest first")
      .option('--limit <n>', 'how many (default 50)', intOption('--limit', 1, 500)),
  ).action(async (id: string, opts: DeliveriesOptions) => {
    const remote = connect(opts);
    const { deliveries } = await ok(
      remote.client.GET('/api/connect/webhook-endpoints/{id}/deliveries', {
        params: { path: { id }, ...(opts.limit ? { query: { limit: opts.limit } } : {}) },
      }),
    );
    if (remote.json) return printJson({ deliveries });
    if (deliveries.length === 0) return console.log('no deliveries yet');
    console.log(
      table(
        deliveries.map((d) => [
          d.createdAt,
          d.eventType,
          d.status,
          `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`,
          d.status === 'pending' && d.nextAttemptAt ? `next ${d.nextAttemptAt}` : '',
          d.lastError ? oneLine(d.lastError, 80) : '',
        ]),
      ),
    );
  });
}

export function register(program: Command): void {
  const group = program
    .command('webhooks')
    .description('endpoints that receive job events, and their deliveries');
  registerAdd(group);
  registerList(group);
  registerRemove(group);
  registerDeliveries(group);
}
