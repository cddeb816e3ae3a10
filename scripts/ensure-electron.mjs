// Runs before `npm run dev` / `npm start`: fetches Electron's binary when it is missing
// (electron 42+ no longer downloads it at install). Needs network access to Electron's
// download host, which a user's machine has and the project's build machines do not.
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const electronDir = dirname(require.resolve('electron/package.json'));
if (existsSync(join(electronDir, 'path.txt'))) process.exit(0);
const installer = join(electronDir, 'install.js');
console.log('Electron binary missing: fetching it once with', installer);
const r = spawnSync(process.execPath, [installer], { stdio: 'inherit' });
process.exit(r.status ?? 1);
