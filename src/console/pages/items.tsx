/**
 * The items table: search and paging (POST /api/connect/knowledgebase-items/query), inline retitle and
 * tag edit (PUT), delete (DELETE) and upload (POST). Polled while an item on the page waits for indexing.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { KnowledgeBaseItem } from '../../client/index.ts';
import { ok } from '../api.ts';
import {
  Badge,
  ErrorText,
  formatTime,
  NoticeView,
  Pager,
  Section,
  splitList,
  useAction,
  useLoad,
  useSession,
} from '../ui.tsx';

const PAGE_SIZES = [20, 50, 100];

type Editing = { id: string; field: 'title' | 'tags'; value: string } | null;

export function ItemsPage() {
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(20);
  const [search, setSearch] = useState('');
  const items = useItemsQuery(page, pageSize, search);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  useEffect(() => setSelected(new Set()), [page, pageSize, search]);
  const [editing, setEditing] = useState<Editing>(null);
  const { notice, busy, save, remove } = useItemChanges(items, setSelected, setEditing);
  const rows = items.data?.items ?? [];
  const pagination = items.data?.pagination;

  return (
    <>
      <Section title="Browse and edit" id="items">
        <ItemsToolbar
          pageSize={pageSize}
          onSearch={(text) => {
            setPage(1);
            setSearch(text);
          }}
          onPageSize={(size) => {
            setPage(1);
            setPageSize(size);
          }}
        />
        <p class="hint" aria-live="polite">
          {items.loading && items.data?.key !== `${page}/${pageSize}/${search}`
            ? search
              ? `Searching for “${search}”…`
              : 'Loading…'
            : ''}
        </p>
        <ErrorText error={items.error} />
        <NoticeView notice={notice} />
        {items.data && rows.length === 0 && (
          <p>
            {search
              ? `No item matches “${search}”.`
              : 'No items yet: connect a source, crawl a site or upload.'}
          </p>
        )}
        {rows.length > 0 && (
          <ItemsTable
            rows={rows}
            loading={items.loading}
            page={pagination?.current_page}
            search={items.data?.search}
            busy={busy}
            selected={selected}
            onSelected={setSelected}
            editing={editing}
            onEdit={setEditing}
            onSave={(item, edit) => void save(item, edit)}
            onDelete={remove}
          />
        )}
        {pagination && (
          <Pager
            page={pagination.current_page}
            pages={pagination.total_pages}
            total={pagination.total_items}
            noun="items"
            busy={items.loading}
            onPage={setPage}
          />
        )}
      </Section>
      <Section title="Upload a document" id="upload">
        <UploadForm
          onUploaded={() => {
            setPage(1);
            void items.reload();
          }}
        />
      </Section>
    </>
  );
}

/** One page of items for a search, polled while one of them waits for indexing. */
function useItemsQuery(page: number, pageSize: number, search: string) {
  const { client } = useSession();
  return useLoad(
    async () => ({
      ...(await ok(
        client.POST('/api/connect/knowledgebase-items/query', {
          body: { page, limit: pageSize, ...(search ? { search } : {}) },
        }),
      )),
      // What this answer is for, shown on the table (tests and the benchmark wait on it).
      search,
      key: `${page}/${pageSize}/${search}`,
    }),
    [page, pageSize, search],
    { pollMs: 2000, poll: (d) => d.items.some((i) => i.indexing_status === 'pending') },
  );
}

type ItemsQuery = ReturnType<typeof useItemsQuery>;

/** Saving an inline edit and deleting items, with the outcome told in one notice for the whole table. */
function useItemChanges(
  items: ItemsQuery,
  setSelected: (selected: Set<string>) => void,
  setEditing: (editing: Editing) => void,
) {
  const { client } = useSession();
  const { notice, busy, run } = useAction();

  const replaceRow = (item: KnowledgeBaseItem) =>
    items.setData((d) => d && { ...d, items: d.items.map((i) => (i.id === item.id ? item : i)) });

  const save = (item: KnowledgeBaseItem, edit: NonNullable<Editing>) =>
    run(async () => {
      const title = edit.field === 'title' ? edit.value.trim() : item.title;
      const tags = edit.field === 'tags' ? splitList(edit.value) : undefined;
      const r = await ok(
        client.PUT('/api/connect/knowledgebase-items', {
          body: [{ id: item.id, title, ...(tags ? { tags } : {}) }],
        }),
      );
      if (r.updated === 0) throw new Error('This item no longer exists; it was deleted meanwhile.');
      replaceRow({ ...item, title, ...(tags ? { tags } : {}) });
      setEditing(null);
      return edit.field === 'title' ? `Renamed to “${title}”.` : `Tags of “${title}” saved.`;
    });

  const remove = (ids: string[], what: string) => {
    if (!confirm(`Delete ${what}? A deleted item stays deleted on later syncs and crawls.`)) return;
    void run(async () => {
      const r = await ok(client.DELETE('/api/connect/knowledgebase-items', { body: { ids } }));
      setSelected(new Set());
      await items.reload();
      return `Deleted ${r.deleted} item${r.deleted === 1 ? '' : 's'}.`;
    });
  };

  return { notice, busy, save, remove };
}

/** The search box and page size; a new search or size starts again at page 1 (the page's handlers do). */
function ItemsToolbar(props: {
  pageSize: number;
  onSearch(text: string): void;
  onPageSize(size: number): void;
}) {
  const [typed, setTyped] = useState('');
  return (
    <form
      class="toolbar"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSearch(typed.trim());
      }}
    >
      <div class="grow">
        <label for="items-search">Search titles and content</label>
        <input
          id="items-search"
          type="search"
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
        />
      </div>
      <div>
        <label for="items-page-size">Per page</label>
        <select
          id="items-page-size"
          value={String(props.pageSize)}
          onChange={(e) => props.onPageSize(Number(e.currentTarget.value))}
        >
          {PAGE_SIZES.map((n) => (
            <option key={n} value={String(n)}>
              {n}
            </option>
          ))}
        </select>
      </div>
      <button type="submit">Search</button>
    </form>
  );
}

/** The page's items with a checkbox each, "Delete selected" above them. */
function ItemsTable(props: {
  rows: KnowledgeBaseItem[];
  loading: boolean;
  page: number | undefined;
  search: string | undefined;
  busy: boolean;
  selected: Set<string>;
  onSelected(selected: Set<string>): void;
  editing: Editing;
  onEdit(edit: Editing): void;
  onSave(item: KnowledgeBaseItem, edit: NonNullable<Editing>): void;
  onDelete(ids: string[], what: string): void;
}) {
  const { rows, selected, editing } = props;
  return (
    <>
      <div class="actions">
        <button
          type="button"
          class="danger"
          disabled={selected.size === 0 || props.busy}
          onClick={() =>
            props.onDelete([...selected], `${selected.size} selected item${selected.size === 1 ? '' : 's'}`)
          }
        >
          Delete selected ({selected.size})
        </button>
      </div>
      <table
        class="table items"
        aria-busy={props.loading}
        data-items-page={props.page}
        data-search={props.search}
      >
        <ItemsTableHead
          allSelected={rows.every((i) => selected.has(i.id))}
          onSelectAll={(on) => props.onSelected(on ? new Set(rows.map((i) => i.id)) : new Set())}
        />
        <tbody>
          {rows.map((item) => (
            <ItemRow
              key={item.id}
              item={item}
              busy={props.busy}
              selected={selected.has(item.id)}
              onSelect={(on) => {
                const next = new Set(selected);
                if (on) next.add(item.id);
                else next.delete(item.id);
                props.onSelected(next);
              }}
              editing={editing?.id === item.id ? editing : null}
              onEdit={props.onEdit}
              onSave={(edit) => props.onSave(item, edit)}
              onDelete={() => props.onDelete([item.id], `“${item.title}”`)}
            />
          ))}
        </tbody>
      </table>
    </>
  );
}

function ItemsTableHead(props: { allSelected: boolean; onSelectAll(on: boolean): void }) {
  return (
    <thead>
      <tr>
        <th scope="col" class="narrow">
          <input
            type="checkbox"
            aria-label="Select all items on this page"
            checked={props.allSelected}
            onChange={(e) => props.onSelectAll(e.currentTarget.checked)}
          />
        </th>
        <th scope="col">Title</th>
        <th scope="col">Source</th>
        <th scope="col">Tags</th>
        <th scope="col">Indexing</th>
        <th scope="col">Updated</th>
        <th scope="col">Actions</th>
      </tr>
    </thead>
  );
}

interface ItemRowProps {
  item: KnowledgeBaseItem;
  busy: boolean;
  selected: boolean;
  onSelect(on: boolean): void;
  editing: Editing;
  onEdit(edit: Editing): void;
  onSave(edit: NonNullable<Editing>): void;
  onDelete(): void;
}

function ItemRow(props: ItemRowProps) {
  const { item, editing } = props;
  return (
    <tr data-item={item.id}>
      <td data-label="Select" class="narrow">
        <input
          type="checkbox"
          aria-label={`Select “${item.title}”`}
          checked={props.selected}
          onChange={(e) => props.onSelect(e.currentTarget.checked)}
        />
      </td>
      <th scope="row" data-label="Title" class="title">
        {editing?.field === 'title' ? (
          <InlineEdit
            label={`New title for “${item.title}”`}
            editing={editing}
            busy={props.busy}
            onEdit={props.onEdit}
            onSave={props.onSave}
          />
        ) : (
          <ItemTitle item={item} />
        )}
      </th>
      <td data-label="Source">
        {item.source_type}
        <div class="hint">{item.source_table_name}</div>
      </td>
      <td data-label="Tags">
        {editing?.field === 'tags' ? (
          <InlineEdit
            label={`Tags of “${item.title}”, comma-separated`}
            editing={editing}
            busy={props.busy}
            onEdit={props.onEdit}
            onSave={props.onSave}
          />
        ) : (
          <TagChips tags={item.tags} />
        )}
      </td>
      <td data-label="Indexing">
        <Badge value={item.indexing_status} />
      </td>
      <td data-label="Updated">{formatTime(item.updated_at)}</td>
      <td data-label="Actions">
        <ItemActions {...props} />
      </td>
    </tr>
  );
}

/** The title, a link to the source when it has a web address (not for file paths or ids). */
function ItemTitle({ item }: { item: KnowledgeBaseItem }) {
  const link = /^https?:\/\//.test(item.source_url) ? item.source_url : null;
  if (!link) return <>{item.title}</>;
  return (
    <a href={link} target="_blank" rel="noopener noreferrer">
      {item.title}
    </a>
  );
}

function TagChips({ tags }: { tags: string[] }) {
  return (
    <span class="chips">
      {tags.map((t) => (
        <span key={t} class="chip">
          {t}
        </span>
      ))}
    </span>
  );
}

function ItemActions(props: ItemRowProps) {
  const { item } = props;
  return (
    <div class="actions">
      <button
        type="button"
        class="secondary"
        aria-label={`Rename “${item.title}”`}
        onClick={() => props.onEdit({ id: item.id, field: 'title', value: item.title })}
      >
        Rename
      </button>
      <button
        type="button"
        class="secondary"
        aria-label={`Edit the tags of “${item.title}”`}
        onClick={() => props.onEdit({ id: item.id, field: 'tags', value: item.tags.join(', ') })}
      >
        Tags
      </button>
      <button
        type="button"
        class="danger"
        aria-label={`Delete “${item.title}”`}
        disabled={props.busy}
        onClick={props.onDelete}
      >
        Delete
      </button>
    </div>
  );
}

/** One field edited in place: Enter saves, Escape (or Cancel) leaves it as it was. */
function InlineEdit(props: {
  label: string;
  editing: NonNullable<Editing>;
  busy: boolean;
  onEdit(edit: Editing): void;
  onSave(edit: NonNullable<Editing>): void;
}) {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  return (
    <form
      class="inline-edit"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSave(props.editing);
      }}
    >
      <input
        ref={input}
        type="text"
        aria-label={props.label}
        value={props.editing.value}
        required={props.editing.field === 'title'}
        onInput={(e) => props.onEdit({ ...props.editing, value: e.currentTarget.value })}
        onKeyDown={(e) => {
          if (e.key === 'Escape') props.onEdit(null);
        }}
      />
      <button type="submit" disabled={props.busy}>
        Save
      </button>
      <button type="button" class="secondary" onClick={() => props.onEdit(null)}>
        Cancel
      </button>
    </form>
  );
}

function UploadForm(props: { onUploaded(): void }) {
  const { client } = useSession();
  const { notice, busy, run } = useAction();
  const [title, setTitle] = useState('');
  const [content, setContent] = useState('');
  const [tags, setTags] = useState('');
  const [url, setUrl] = useState('');
  const [visibility, setVisibility] = useState<Visibility>('public');
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          const r = await ok(
            client.POST('/api/connect/knowledgebase-items', {
              body: {
                title: title.trim(),
                content,
                tags: splitList(tags),
                visibility,
                ...(url.trim() ? { source_url: url.trim() } : {}),
              },
            }),
          );
          setTitle('');
          setContent('');
          setTags('');
          setUrl('');
          props.onUploaded();
          return `Uploaded “${r.item.title}”; it is searchable once indexed.`;
        });
      }}
    >
      <UploadFileInput
        onFile={(text, name) => {
          setContent(text);
          if (!title.trim()) setTitle(name);
        }}
      />
      <label for="upload-title">Title</label>
      <input
        id="upload-title"
        type="text"
        required
        value={title}
        onInput={(e) => setTitle(e.currentTarget.value)}
      />
      <label for="upload-content">Content (markdown or plain text)</label>
      <textarea
        id="upload-content"
        rows={6}
        required
        value={content}
        onInput={(e) => setContent(e.currentTarget.value)}
      />
      <UploadTagsAndVisibility
        tags={tags}
        onTags={setTags}
        visibility={visibility}
        onVisibility={setVisibility}
      />
      <label for="upload-url">Source URL (optional)</label>
      <input id="upload-url" type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      <button type="submit" disabled={busy}>
        Upload
      </button>
      <NoticeView notice={notice} />
    </form>
  );
}

/** Reads a picked text or markdown file into the form: its text, and its name without extension. */
function UploadFileInput(props: { onFile(text: string, name: string): void }) {
  return (
    <>
      <label for="upload-file">Read a text or markdown file (optional)</label>
      <input
        id="upload-file"
        type="file"
        accept=".md,.markdown,.txt,text/plain,text/markdown"
        onChange={async (e) => {
          const file = e.currentTarget.files?.[0];
          if (!file) return;
          props.onFile(await file.text(), file.name.replace(/\.[^.]+$/, ''));
        }}
      />
    </>
  );
}

type Visibility = 'public' | 'private';

function UploadTagsAndVisibility(props: {
  tags: string;
  onTags(tags: string): void;
  visibility: Visibility;
  onVisibility(visibility: Visibility): void;
}) {
  return (
    <div class="row">
      <div>
        <label for="upload-tags">Tags (comma-separated)</label>
        <input
          id="upload-tags"
          type="text"
          value={props.tags}
          onInput={(e) => props.onTags(e.currentTarget.value)}
        />
      </div>
      <div>
        <label for="upload-visibility">Visibility</label>
        <select
          id="upload-visibility"
          value={props.visibility}
          onChange={(e) => props.onVisibility(e.currentTarget.value as Visibility)}
        >
          <option value="public">public</option>
          <option value="private">private</option>
        </select>
      </div>
    </div>
  );
}
