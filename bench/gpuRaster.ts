/**
 * The ui bench on a machine with a GPU (UI_BENCH_GPU=1, bench/ui.bench.ts): Chromium's flags for
 * hardware raster and compositing, and the check, read off Chromium's own report (CDP
 * `SystemInfo.getInfo`), that it really drew on a hardware GPU. A researcher's workstation draws the
 * dashboard on its GPU; the bench's default (software raster, `--disable-gpu`, these build machines)
 * pays raster and composite costs on the CPU that a GPU does not (decision 079), so a GPU run is a
 * mode of its own, and every run says which it was (decision 080 has what an H200 machine showed).
 *
 * Never a fallback: where Chromium ends up in software (the GPU blocklisted, no driver, a software
 * GPU such as SwiftShader or Mesa's llvmpipe standing in), `rasterCheck` says so and the bench refuses to
 * print figures labelled as GPU ones.
 */

/** Flags added to the headless flags for hardware raster (on top of what UI_BENCH_CHROMIUM_ARGS adds). */
export const GPU_ARGS = ['--enable-gpu-rasterization', '--ignore-gpu-blocklist'];

/**
 * Chromium's flags for the bench: the headless defaults, with `--disable-gpu` dropped and GPU_ARGS
 * added when `gpu`, then `extra` (UI_BENCH_CHROMIUM_ARGS, space-separated; e.g. `--use-angle=vulkan`).
 */
export function benchChromiumArgs(base: readonly string[], gpu: boolean, extra = ''): string[] {
  const args = gpu ? [...base.filter((a) => a !== '--disable-gpu'), ...GPU_ARGS] : [...base];
  return [...args, ...extra.split(/\s+/).filter(Boolean)];
}

/** What is read of CDP's `SystemInfo.getInfo` answer. */
export interface SystemInfo {
  gpu: {
    devices: { vendorString?: string; deviceString?: string; driverVendor?: string; driverVersion?: string; vendorId?: number }[];
    /** Chromium's feature status, as chrome://gpu shows it: `enabled`, `enabled_on`, `disabled_software`, `unavailable_software`, ... */
    featureStatus?: Record<string, string>;
  };
}

/** How the browser drew, in one printable line, and whether it was on a hardware GPU. */
export interface RasterReport {
  /** Raster and compositing both on a GPU that is not a software stand-in. */
  hardware: boolean;
  line: string;
}

/** Software renderers that can report themselves as a GPU. */
const SOFTWARE_GPU = /swiftshader|swangle|llvmpipe|softpipe|lavapipe|software/i;
/** Google's PCI vendor id, which SwiftShader reports. */
const SWIFTSHADER_VENDOR = 0x1ae0;

/** Reads Chromium's report: raster and compositing must be `enabled*`, on a device that is not a software renderer. */
export function rasterCheck(info: SystemInfo): RasterReport {
  const status = info.gpu.featureStatus ?? {};
  const device = info.gpu.devices[0];
  const name = device ? [device.vendorString, device.deviceString, device.driverVendor, device.driverVersion].filter(Boolean).join(' ') : '';
  const softwareDevice = !name || SOFTWARE_GPU.test(name) || device?.vendorId === SWIFTSHADER_VENDOR;
  const on = (key: string) => (status[key] ?? '').startsWith('enabled');
  const hardware = on('rasterization') && on('gpu_compositing') && !softwareDevice;
  const fields = ['rasterization', 'gpu_compositing', '2d_canvas'].map((k) => `${k} ${status[k] ?? 'unknown'}`).join(', ');
  return { hardware, line: `chromium draws on ${hardware ? 'the GPU' : 'the CPU'}: ${fields}; device ${name || 'none'}` };
}
