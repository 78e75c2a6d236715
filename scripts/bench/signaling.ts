// `npm run bench:signaling`: the signaling benchmark, signaling.bench.ts (the name `npm run bench`
// looks for), under the file name package.json's script gives it.
import './signaling.bench.js';
