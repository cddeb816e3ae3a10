// Types of scripts/set-fuses.mjs for the TypeScript tests that import it.
import type { FuseConfig, FuseState } from '@electron/fuses';

export declare const FUSE_SETTINGS: Readonly<
  Record<'RunAsNode' | 'EnableCookieEncryption' | 'EnableNodeOptionsEnvironmentVariable' | 'EnableNodeCliInspectArguments' | 'OnlyLoadAppFromAsar', boolean>
>;
export declare function fuseConfig(settings?: Readonly<Record<string, boolean>>): FuseConfig;
export declare function setFuses(electronPath: string, settings?: Readonly<Record<string, boolean>>): Promise<FuseConfig<FuseState>>;
export default function afterPack(context: {
  appOutDir: string;
  electronPlatformName: string;
  packager: { appInfo: { productFilename: string }; executableName?: string };
}): Promise<void>;
