/**
 * The desktop app hands only allowlisted https links to the system browser (issue: the window-open
 * handler passed any https:// URL to shell.openExternal). Pure helper, no Electron needed.
 */
import { describe, expect, it } from 'vitest';
import { EXTERNAL_LINK_HOSTS, isAllowedExternalLink } from '../../src/main/externalLinks';

describe('external links allowlist', () => {
  it('opens https links to the allowlisted hosts', () => {
    expect(EXTERNAL_LINK_HOSTS.length).toBeGreaterThan(0);
    expect(isAllowedExternalLink('https://github.com/some/repo')).toBe(true);
    expect(isAllowedExternalLink('https://arxiv.org/abs/2501.00001')).toBe(true);
    expect(isAllowedExternalLink('https://huggingface.co/Qwen/Qwen3-0.6B')).toBe(true);
  });

  it('refuses any other https site, as the old prefix check did not', () => {
    expect(isAllowedExternalLink('https://evil.example/phish')).toBe(false);
    expect(isAllowedExternalLink('https://github.com.evil.example/')).toBe(false);
    expect(isAllowedExternalLink('https://gist.github.com/x')).toBe(false); // exact hosts, no wildcards
  });

  it('refuses other schemes, ports, credentials and junk', () => {
    for (const url of [
      'http://github.com/',
      'file:///etc/passwd',
      'smb://github.com/share',
      'ms-msdt:/id PCWDiagnostic',
      'javascript:alert(1)',
      'https://github.com:8443/',
      'https://user:pw@github.com/',
      'https://evil.example@github.com.evil.example/',
      'not a url',
      '',
    ])
      expect(isAllowedExternalLink(url), url).toBe(false);
  });
});
