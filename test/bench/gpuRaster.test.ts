/**
 * bench/gpuRaster: the flags for the ui bench's GPU mode, and the check that refuses to call a
 * software renderer a GPU. Every answer here is Chromium 150's own (`SystemInfo.getInfo`, trimmed to
 * what the check reads): on this build machine, the full browser with `--disable-gpu` (SwiftShader
 * stands in), the headless shell with the GPU flags but no GPU, and ANGLE on Mesa's llvmpipe
 * (`--use-angle=gl-egl`); on the device machine (an NVIDIA H200, 2026-12-04), ANGLE on Vulkan with the
 * GPU, and the same browser with `--disable-gpu` (SwANGLE, the software Vulkan, named after the GPU).
 */
import { describe, expect, it } from 'vitest';
import { benchChromiumArgs, GPU_ARGS, rasterCheck, type SystemInfo } from '../../bench/gpuRaster';

const info = (device: SystemInfo['gpu']['devices'][number], raster: string, compositing: string, canvas: string): SystemInfo => ({
  gpu: { devices: [device], featureStatus: { '2d_canvas': canvas, gpu_compositing: compositing, rasterization: raster } },
});
const swiftShader = info(
  {
    vendorId: 65535,
    vendorString: 'Google Inc. (Google)',
    deviceString: 'ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver-5.0.0)',
    driverVendor: 'SwANGLE',
    driverVersion: '5.0.0',
  },
  'disabled_software',
  'disabled_software',
  'unavailable_software',
);
const shellNoGpu = info(
  { vendorId: 0, vendorString: '', deviceString: '', driverVendor: '', driverVersion: '' },
  'disabled_software',
  'disabled_software',
  'disabled_software',
);
const llvmpipe = info(
  {
    vendorId: 0,
    vendorString: 'Google Inc. (Mesa/X.org)',
    deviceString: 'ANGLE (Mesa/X.org, llvmpipe (LLVM 15.0.6 256 bits), OpenGL ES 3.2 Mesa 22.3.6)',
    driverVendor: 'Mesa',
    driverVersion: '22.3.6',
  },
  'enabled_force',
  'enabled',
  'enabled',
);
const h200Device = {
  vendorId: 0,
  vendorString: 'Google Inc. (NVIDIA)',
  deviceString: 'ANGLE (NVIDIA, Vulkan 1.4.312 (NVIDIA NVIDIA H200 (0x00002335)), NVIDIA-580.159.4.0)',
  driverVendor: 'NVIDIA',
  driverVersion: '580.159.4.0',
};
const h200 = info(h200Device, 'enabled_force', 'enabled', 'enabled');
const h200Software = info({ ...h200Device, driverVendor: 'SwANGLE' }, 'disabled_software', 'disabled_software', 'unavailable_software');
const allOn = { '2d_canvas': 'enabled', gpu_compositing: 'enabled', rasterization: 'enabled' };

describe('benchChromiumArgs', () => {
  const base = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic'];
  it('keeps the headless flags as they are without the GPU, adding only the extra flags', () => {
    expect(benchChromiumArgs(base, false)).toEqual(base);
    expect(benchChromiumArgs(base, false, ' --foo  --bar=1 ')).toEqual([...base, '--foo', '--bar=1']);
  });
  it('drops --disable-gpu and adds the raster flags with the GPU', () => {
    const args = benchChromiumArgs(base, true, '--use-angle=vulkan');
    expect(args).not.toContain('--disable-gpu');
    expect(args).toEqual(['--headless', '--no-sandbox', '--disable-quic', '--enable-gpu-rasterization', '--ignore-gpu-blocklist', '--use-angle=vulkan']);
    expect(GPU_ARGS).toContain('--enable-gpu-rasterization');
  });
});

describe('rasterCheck', () => {
  it('calls Chromium’s own software answers software, naming the status it read', () => {
    for (const answer of [swiftShader, shellNoGpu, h200Software]) {
      const r = rasterCheck(answer);
      expect(r.hardware).toBe(false);
      expect(r.line).toMatch(/^chromium draws on the CPU: rasterization disabled_software, gpu_compositing disabled_software/);
    }
    expect(rasterCheck(swiftShader).line).toContain('SwiftShader');
    expect(rasterCheck(shellNoGpu).line).toMatch(/device none$/);
  });
  it('accepts raster and compositing enabled on a hardware device', () => {
    const r = rasterCheck(h200);
    expect(r.hardware).toBe(true);
    expect(r.line).toBe(
      'chromium draws on the GPU: rasterization enabled_force, gpu_compositing enabled, 2d_canvas enabled; device Google Inc. (NVIDIA) ANGLE (NVIDIA, Vulkan 1.4.312 (NVIDIA NVIDIA H200 (0x00002335)), NVIDIA-580.159.4.0) NVIDIA 580.159.4.0',
    );
    expect(rasterCheck({ gpu: { ...h200.gpu, featureStatus: allOn } }).hardware).toBe(true);
  });
  it('refuses half a GPU, a software device reporting itself enabled, and a report with no devices', () => {
    expect(rasterCheck({ gpu: { ...h200.gpu, featureStatus: { ...allOn, rasterization: 'disabled_software' } } }).hardware).toBe(false);
    expect(rasterCheck({ gpu: { ...h200.gpu, featureStatus: { ...allOn, gpu_compositing: 'disabled_software' } } }).hardware).toBe(false);
    // llvmpipe reports raster and compositing enabled: only its name gives it away.
    expect(rasterCheck(llvmpipe)).toEqual({
      hardware: false,
      line: 'chromium draws on the CPU: rasterization enabled_force, gpu_compositing enabled, 2d_canvas enabled; device Google Inc. (Mesa/X.org) ANGLE (Mesa/X.org, llvmpipe (LLVM 15.0.6 256 bits), OpenGL ES 3.2 Mesa 22.3.6) Mesa 22.3.6',
    });
    // SwANGLE on the GPU machine carries the GPU's name in its device string.
    expect(rasterCheck(h200Software).hardware).toBe(false);
    expect(rasterCheck({ gpu: { ...h200Software.gpu, featureStatus: allOn } }).hardware).toBe(false);
    expect(rasterCheck({ gpu: { ...swiftShader.gpu, featureStatus: allOn } }).hardware).toBe(false);
    expect(rasterCheck({ gpu: { devices: [], featureStatus: allOn } })).toEqual({
      hardware: false,
      line: 'chromium draws on the CPU: rasterization enabled, gpu_compositing enabled, 2d_canvas enabled; device none',
    });
  });
});
