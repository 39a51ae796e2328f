/**
 * A chunk's markdown as the search playground shows it: headings, lists, emphasis, code, links and tables
 * rendered, the query's terms marked. Built as Preact elements from marked's tokens, never as an HTML
 * string: raw HTML in a chunk is shown as text, links open only http(s) addresses, images show their alt
 * text. So a chunk cannot inject markup, whatever its source wrote.
 */
import type { ComponentChildren } from 'preact';
import { Lexer, type Token, type Tokens } from 'marked';
import { highlight } from './highlight.ts';

/** Renders `markdown`, marking the terms of `query` in its text. */
export function Markdown(props: { markdown: string; query: string }) {
  const tokens = Lexer.lex(props.markdown, { gfm: true });
  return <>{blocks(tokens, props.query)}</>;
}

function blocks(tokens: Token[], query: string): ComponentChildren[] {
  return tokens.map((token, i) => block(token, query, i));
}

function block(token: Token, query: string, key: number): ComponentChildren {
  switch (token.type) {
    case 'heading': {
      // Inside a hit a heading is a line in bold, not a document outline entry.
      return (
        <p key={key} class="md-heading">
          <strong>{inline(token.tokens ?? [], query)}</strong>
        </p>
      );
    }
    case 'paragraph':
      return <p key={key}>{inline(token.tokens ?? [], query)}</p>;
    case 'text':
      return <span key={key}>{token.tokens ? inline(token.tokens, query) : marked(token.text, query)}</span>;
    case 'code':
      return (
        <pre key={key}>
          <code>{marked((token as Tokens.Code).text, query)}</code>
        </pre>
      );
    case 'blockquote':
      return <blockquote key={key}>{blocks(token.tokens ?? [], query)}</blockquote>;
    case 'list':
      return list(token as Tokens.List, query, key);
    case 'table':
      return table(token as Tokens.Table, query, key);
    case 'hr':
      return <hr key={key} />;
    case 'space':
      return null;
    default:
      // html and anything unknown: its source text, as text.
      return <p key={key}>{marked(token.raw, query)}</p>;
  }
}

function list(token: Tokens.List, query: string, key: number): ComponentChildren {
  const items = token.items.map((item, i) => <li key={i}>{blocks(item.tokens, query)}</li>);
  return token.ordered ? (
    <ol key={key} start={typeof token.start === 'number' ? token.start : undefined}>
      {items}
    </ol>
  ) : (
    <ul key={key}>{items}</ul>
  );
}

function table(token: Tokens.Table, query: string, key: number): ComponentChildren {
  return (
    <div key={key} class="md-table">
      <table>
        <thead>
          <tr>
            {token.header.map((cell, i) => (
              <th key={i} scope="col">
                {inline(cell.tokens, query)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {token.rows.map((row, r) => (
            <tr key={r}>
              {row.map((cell, c) => (
                <td key={c}>{inline(cell.tokens, query)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function inline(tokens: Token[], query: string): ComponentChildren[] {
  return tokens.map((token, key) => {
    switch (token.type) {
      case 'strong':
        return <strong key={key}>{inline(token.tokens ?? [], query)}</strong>;
      case 'em':
        return <em key={key}>{inline(token.tokens ?? [], query)}</em>;
      case 'del':
        return <del key={key}>{inline(token.tokens ?? [], query)}</del>;
      case 'codespan':
        return <code key={key}>{marked((token as Tokens.Codespan).text, query)}</code>;
      case 'br':
        return <br key={key} />;
      case 'link':
        return link(token as Tokens.Link, query, key);
      case 'image':
        return <span key={key}>{marked((token as Tokens.Image).text, query)}</span>;
      case 'text':
      case 'escape':
        return (
          <span key={key}>
            {'tokens' in token && token.tokens ? inline(token.tokens, query) : marked(token.text, query)}
          </span>
        );
      case 'html':
        // An inline tag (`<b>`, `</span>`): left out; the text between tags is shown as text.
        return null;
      default:
        return <span key={key}>{marked(token.raw, query)}</span>;
    }
  });
}

function link(token: Tokens.Link, query: string, key: number): ComponentChildren {
  const text = inline(token.tokens, query);
  if (!/^https?:\/\//i.test(token.href)) return <span key={key}>{text}</span>;
  return (
    <a key={key} href={token.href} target="_blank" rel="noopener noreferrer">
      {text}
    </a>
  );
}

/** Text with the query's terms in <mark>. */
function marked(text: string, query: string): ComponentChildren[] {
  return highlight(decodeEntities(text), query).map((part, i) =>
    part.match ? <mark key={i}>{part.text}</mark> : part.text,
  );
}

/** Markdown's character references for `&`, `<`, `>` and quotes show as the characters they stand for. */
function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) =>
    e === 'amp' ? '&' : e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : "'",
  );
}
