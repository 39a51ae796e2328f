/**
 * Small valid PDF documents for the crawler's PDF tests, written byte by byte (no PDF library on the
 * writing side, so the reading side is tested against an independent producer): pages of Helvetica text,
 * an optional outline (bookmarks) with nested entries, a document title, and optionally an /Encrypt
 * dictionary whose password nobody knows.
 */

export interface PdfOutlineEntry {
  title: string;
  /** 0-based page the entry points to. */
  page: number;
  children?: PdfOutlineEntry[];
}

export interface PdfSpec {
  /** Each page's lines of text. */
  pages: string[][];
  title?: string;
  outline?: PdfOutlineEntry[];
  /** Adds a Standard security handler no empty password opens. */
  encrypted?: boolean;
}

const pdfString = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);

/** The PDF file for `spec`. */
export function makePdf(spec: PdfSpec): Buffer {
  const objects: string[] = [];
  const add = (body: string) => {
    objects.push(body);
    return objects.length;
  };
  const reserve = () => add('');
  const set = (n: number, body: string) => {
    objects[n - 1] = body;
  };

  const catalog = reserve();
  const pagesRoot = reserve();
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const pageRefs: number[] = [];
  for (const lines of spec.pages) {
    const text = lines.map((l, i) => `${i === 0 ? '' : '0 -16 Td '}(${pdfString(l)}) Tj`).join('\n');
    const stream = `BT /F1 12 Tf 72 720 Td\n${text}\nET`;
    const contents = add(
      `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`,
    );
    pageRefs.push(
      add(
        `<< /Type /Page /Parent ${pagesRoot} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${contents} 0 R >>`,
      ),
    );
  }
  set(
    pagesRoot,
    `<< /Type /Pages /Kids [${pageRefs.map((r) => `${r} 0 R`).join(' ')}] /Count ${pageRefs.length} >>`,
  );

  let outlines: number | null = null;
  if (spec.outline && spec.outline.length > 0) {
    outlines = reserve();
    const writeLevel = (
      entries: PdfOutlineEntry[],
      parent: number,
    ): { first: number; last: number; count: number } => {
      const refs = entries.map(() => reserve());
      let count = entries.length;
      entries.forEach((e, i) => {
        const kids = e.children && e.children.length > 0 ? writeLevel(e.children, refs[i]!) : null;
        if (kids) count += kids.count;
        const parts = [
          `/Title (${pdfString(e.title)})`,
          `/Parent ${parent} 0 R`,
          `/Dest [${pageRefs[e.page]} 0 R /XYZ 0 792 0]`,
          i > 0 ? `/Prev ${refs[i - 1]} 0 R` : '',
          i < refs.length - 1 ? `/Next ${refs[i + 1]} 0 R` : '',
          kids ? `/First ${kids.first} 0 R /Last ${kids.last} 0 R /Count ${kids.count}` : '',
        ];
        set(refs[i]!, `<< ${parts.filter(Boolean).join(' ')} >>`);
      });
      return { first: refs[0]!, last: refs.at(-1)!, count };
    };
    const top = writeLevel(spec.outline, outlines);
    set(outlines, `<< /Type /Outlines /First ${top.first} 0 R /Last ${top.last} 0 R /Count ${top.count} >>`);
  }
  set(
    catalog,
    `<< /Type /Catalog /Pages ${pagesRoot} 0 R${outlines ? ` /Outlines ${outlines} 0 R /PageMode /UseOutlines` : ''} >>`,
  );
  const info = add(`<< /Title (${pdfString(spec.title ?? '')}) /Producer (kb test) >>`);
  const encrypt = spec.encrypted
    ? add(`<< /Filter /Standard /V 1 /R 2 /O <${'7a'.repeat(32)}> /U <${'3c'.repeat(32)}> /P -44 >>`)
    : null;

  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  const id = `<${'0123456789abcdef'.repeat(2)}>`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R /Info ${info} 0 R${
    encrypt ? ` /Encrypt ${encrypt} 0 R` : ''
  } /ID [${id} ${id}] >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
