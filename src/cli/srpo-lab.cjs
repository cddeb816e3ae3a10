#!/usr/bin/env node
// The `srpo-lab` executable (package.json "bin"): registers tsx's TypeScript loader and runs
// src/cli/index.ts in this process. No build step: the lab runs from its sources. The engine
// processes the CLI starts load tsx the same way (src/core/host/launcher.ts).
// Tested by test/cli/train.test.ts ("the srpo-lab executable").
require('tsx/cjs');
require('./index.ts');
