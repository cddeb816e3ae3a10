// A stand-in engine for host tests that need no real process: it writes its run's status the way
// a real engine does (running at launch; completed when told) and reports its exit to the host.
import type { LabService } from '../../../src/core/host/labService';
import { EngineHandleBase, type EngineLaunchRequest } from '../../../src/core/host/launcher';
import type { HostMessage } from '../../../src/core/host/messages';

export class FakeEngine extends EngineHandleBase {
  readonly pid = undefined;
  constructor(
    readonly request: EngineLaunchRequest,
    private readonly service: LabService,
  ) {
    super();
    service.store.updateRun(request.runId, { status: 'running', startedAt: Date.now() });
  }
  send(_m: HostMessage): void {}
  kill(): void {
    this.exit(null, 'SIGKILL');
  }
  complete(): void {
    this.service.store.updateRun(this.request.runId, { status: 'completed', endedAt: Date.now() });
    this.receive({ type: 'status', status: 'completed' });
    this.exit(0, null);
  }
}
