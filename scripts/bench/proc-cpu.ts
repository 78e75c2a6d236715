// CPU time of processes from /proc (Linux), for benchmarks whose processes are not all Node: the
// media benchmark's Janus and Chromium. A process's time is utime + stime of /proc/<pid>/stat, in
// clock ticks (USER_HZ, 100 on Linux); a group of processes is read as one sample, and two samples
// give the group's CPU seconds between them (a process that started in between counts from zero; one
// that ended in between is lost, which the benchmark avoids by sampling while its processes live).
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

interface Stat {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
}

/** /proc/<pid>/stat: the command sits in parentheses and may hold spaces, so the fields are counted after its `)`. */
function statOf(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // ended meanwhile
  }
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // after the comm: state(3) ppid(4) … utime(14) stime(15), numbered from 1 over the whole line
  return { pid, ppid: Number(fields[1]), comm: text.slice(text.indexOf('(') + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
}

function allStats(): Stat[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => statOf(Number(name)))
    .filter((stat): stat is Stat => stat !== undefined);
}

/** The pids of every process whose command is `comm` (e.g. `postgres`, `redis-server`), now. */
export function processesNamed(comm: string): number[] {
  return allStats()
    .filter((stat) => stat.comm === comm)
    .map((stat) => stat.pid);
}

/** Every process below `root` (not `root` itself), now. */
export function descendantsOf(root: number): Stat[] {
  const stats = allStats();
  const children = new Map<number, Stat[]>();
  for (const stat of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  const found: Stat[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      walk(child.pid);
    }
  };
  walk(root);
  return found;
}

/** Clock ticks so far of each process, by pid. */
export type CpuSample = Map<number, number>;

export function sample(pids: number[]): CpuSample {
  return new Map(
    pids.flatMap((pid) => {
      const stat = statOf(pid);
      return stat ? [[pid, stat.ticks] as const] : [];
    }),
  );
}

/** CPU seconds the processes of `after` used since `before` (those absent from `before` from their start). */
export function cpuSecondsBetween(before: CpuSample, after: CpuSample): number {
  let ticks = 0;
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0);
  return ticks / TICKS_PER_SECOND;
}

/** The 1-, 5- and 15-minute load averages as /proc/loadavg gives them, e.g. `3.12 2.80 2.10`. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
