/**
 * Checks that the native Postgres fixture runs on any x86-64 CPU with AVX2, not only on the AVX-512
 * machine that happens to run the tests (test/db/native-postgres-fixture.test.ts uses them):
 *
 * - {@link scanForAvx512}: disassembles a binary and finds AVX-512 instructions (EVEX-encoded) outside
 *   functions that are only entered after a run-time CPU check. A build with such instructions in ordinary
 *   functions kills its process (SIGILL) on CPUs without AVX-512, whatever this machine's CPU is.
 * - {@link ensureTool}: the scan needs `objdump` (binutils) and the emulation check `qemu-x86_64`
 *   (qemu-user); CI machines start bare, so as root on Debian/Ubuntu the missing package is installed.
 */
import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * Function names that mark code entered only after a run-time CPU check: pgvector's `*Avx512*` kernels,
 * Postgres' `pg_*_avx512` and `*_choose` dispatchers, GCC's `target_clones`/ifunc resolvers.
 */
export const DISPATCHED_FUNCTION = /avx512|zmm|_target_|ifunc|resolver|_choose$/i;

/** Per function: how many AVX-512 instructions, and the first one as objdump printed it. */
export interface Avx512Hits {
  count: number;
  sample: string;
}

export interface Avx512Scan {
  file: string;
  /** Instructions decoded in total (shows the scan read real code). */
  instructions: number;
  /** AVX-512 code in functions whose names mark run-time dispatch: harmless. */
  dispatched: Map<string, Avx512Hits>;
  /** AVX-512 code anywhere else: fatal on CPUs without AVX-512. */
  undispatched: Map<string, Avx512Hits>;
}

// `  98c0:\t62 f1 fe 48 6f 0c 06 \tvmovdqu64 (%rsi,%rax,1),%zmm1`
const INSN = /^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)\s*\t(.*)$/;
const FUNCTION = /^[0-9a-f]+ <(.+)>:$/;
// Operands only AVX-512 has: 512-bit and upper-16 vector registers, mask registers, embedded broadcast.
const AVX512_OPERAND = /%zmm\d|%[xy]mm(?:1[6-9]|2\d|3[01])\b|%k[0-7]\b|\{1to\d+\}/;
// Prefixes that may precede an EVEX prefix: address size and segment overrides.
const PASS_PREFIX = new Set(['67', '26', '2e', '36', '3e', '64', '65']);

/** True when objdump's bytes and text describe an AVX-512 instruction. */
export function isAvx512Instruction(bytes: string[], text: string): boolean {
  // In 64-bit mode 0x62 as the first opcode byte is always the EVEX prefix (BOUND does not exist there).
  const first = bytes.find((b) => !PASS_PREFIX.has(b));
  if (first === '62') return true;
  // Symbol names in `<...>` and comments after `#` may contain "zmm" without being operands.
  return AVX512_OPERAND.test(text.replace(/<[^>]*>/g, '').replace(/#.*$/, ''));
}

/** Disassembles `file` with objdump and sorts its AVX-512 instructions by function. */
export async function scanForAvx512(file: string): Promise<Avx512Scan> {
  // --wide keeps each instruction's bytes on its own line, so the first byte is always at hand.
  const child = spawn('objdump', ['-d', '--wide', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code ?? 1));
  });
  const scan: Avx512Scan = { file, instructions: 0, dispatched: new Map(), undispatched: new Map() };
  let fn = '(no symbol)';
  for await (const line of createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY })) {
    const f = FUNCTION.exec(line);
    if (f) {
      fn = f[1]!;
      continue;
    }
    const m = INSN.exec(line);
    if (!m) continue;
    scan.instructions++;
    if (!isAvx512Instruction(m[1]!.trim().split(' '), m[2]!)) continue;
    const into = DISPATCHED_FUNCTION.test(fn) ? scan.dispatched : scan.undispatched;
    const hit = into.get(fn);
    if (hit) hit.count++;
    else into.set(fn, { count: 1, sample: m[2]!.trim() });
  }
  const code = await exited;
  if (code !== 0) throw new Error(`objdump -d ${file} exited with ${code}: ${stderr.trim()}`);
  return scan;
}

/** One line per function, most instructions first: `l2_normalize (8: vmovups (%rdi),%zmm0)`. */
export function describeHits(hits: Map<string, Avx512Hits>): string {
  return [...hits]
    .sort((a, b) => b[1].count - a[1].count)
    .map(([fn, h]) => `${fn} (${h.count}: ${h.sample})`)
    .join('\n');
}

/** Whether `name` is on the PATH. */
export async function commandExists(name: string): Promise<boolean> {
  try {
    await execFileAsync('sh', ['-c', `command -v ${name}`]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `command` available: present already, or (as root with apt-get) installed from the Debian package
 * `debPackage`. Resolves to null when it is there, or to the reason it is not.
 */
export async function ensureTool(command: string, debPackage: string): Promise<string | null> {
  if (await commandExists(command)) return null;
  if (process.getuid?.() !== 0 || !(await commandExists('apt-get'))) {
    return `${command} is missing (install the ${debPackage} package; as root this check installs it itself)`;
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Wait for a dpkg lock held by someone else instead of failing at once.
  const lock = ['-o', 'DPkg::Lock::Timeout=120'];
  try {
    await execFileAsync('apt-get', [...lock, 'update', '-qq'], {
      env,
      timeout: 240_000,
      maxBuffer: 64 << 20,
    });
    await execFileAsync('apt-get', [...lock, 'install', '-y', '-qq', '--no-install-recommends', debPackage], {
      env,
      timeout: 300_000,
      maxBuffer: 64 << 20,
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return `installing ${debPackage} failed: ${(e.stderr ?? e.message).trim().split('\n').slice(-3).join(' ')}`;
  }
  return (await commandExists(command)) ? null : `${debPackage} installed but ${command} is still missing`;
}
