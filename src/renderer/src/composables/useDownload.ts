/**
 * Saves an exported report (ReportFile) through the browser's download mechanism (a Blob and a
 * temporary link; Electron shows its save dialog). The object URL is revoked right after.
 */
import type { ReportFile } from '../../../shared/api';

export function downloadReport(file: ReportFile): void {
  const bytes = file.encoding === 'base64' ? Uint8Array.from(atob(file.content), (c) => c.charCodeAt(0)) : new TextEncoder().encode(file.content);
  const url = URL.createObjectURL(new Blob([bytes], { type: file.mime }));
  const a = document.createElement('a');
  a.href = url;
  a.download = file.filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
