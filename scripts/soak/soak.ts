// `npm run soak`: the full soak (soak-driver.ts), 180 s of load by default after the warm-up;
// `npm run soak -- --seconds 60` or SOAK_SECONDS for another length, `--seed N` for another draw.
// DATABASE_URL and REDIS_URL, when set, are what the server runs on. Prints its figures and exits
// non-zero when anything went wrong or leaked (the CI variant is test/soak/soak.test.ts).
import { describeMeasure, runSoak } from './soak-driver.js';

const argument = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const seconds = Number(argument('--seconds') ?? process.env.SOAK_SECONDS ?? 180);
const seed = Number(argument('--seed') ?? 1);
if (!(seconds > 0) || !Number.isInteger(seed)) throw new Error('usage: npm run soak -- [--seconds N] [--seed N]');

const started = performance.now();
const report = await runSoak({ seconds, seed, log: (line) => console.log(`[soak] ${line}`) });
const { soak, baseline, after } = report;
const grew = after.memory.heapUsed - baseline.memory.heapUsed;

console.log(`
Soak on ${report.backends.database}${report.backends.redis ? ' with Redis' : ''}, ${seconds} s of load, ${((performance.now() - started) / 1000).toFixed(0)} s in all
  connections held:  ${soak.signaling.peakOpen} (${report.options.rooms} rooms × ${report.options.perRoom}), filled in ${soak.fillSeconds.toFixed(1)} s
  sessions:          ${soak.signaling.sessions} (${soak.signaling.sessions - soak.signaling.peakOpen} beyond the first fill: guests and moderators coming back)
  timer runs:        ${JSON.stringify(soak.signaling.runs.entries())}
  signaling:         ${soak.signaling.commands} commands sent, ${soak.signaling.frames} frames received, ${soak.signaling.provoked} provoked error frames
  frames:            ${JSON.stringify(soak.signaling.messages.entries())}
  HTTP:              ${soak.http.requests.total()} requests, ${soak.http.provoked} provoked refusals: ${JSON.stringify(soak.http.requests.entries())}
  server baseline:   ${describeMeasure(baseline)}
  server after:      ${describeMeasure(after)}
  heap used grew by: ${(grew / 1024 / 1024).toFixed(2)} MiB
  leaks:             ${report.leaks.length === 0 ? 'none' : report.leaks.join('; ')}
  Redis left:        ${report.redisLeft.length === 0 ? 'nothing' : report.redisLeft.join(', ')}
  problems:          ${report.problems.count === 0 ? 'none' : `${report.problems.count}:\n    ${report.problems.first.join('\n    ')}`}`);

process.exitCode = report.problems.count === 0 && report.leaks.length === 0 && report.redisLeft.length === 0 ? 0 : 1;
