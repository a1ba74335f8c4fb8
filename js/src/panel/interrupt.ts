/**
 * Stop while the agent runs a cell, where the kernel does not answer the Stop (it reads
 * nothing while a cell runs, unless a subshell carried the click): the frontend interrupts
 * it, first by asking the lab extension (an event it may take with preventDefault()),
 * else through the Jupyter server's REST API.
 */

/**
 * How long Stop waits for the kernel's answer before the frontend interrupts the cell the
 * agent runs (a kernel held by a cell answers nothing): ms.
 */
export const STOP_ANSWER_GRACE = 300;

interface IPageConfig {
  baseUrl?: string;
  token?: string;
}

function pageConfig(): IPageConfig | null {
  const node = document.getElementById('jupyter-config-data');
  if (!node) return null;
  try {
    return JSON.parse(node.textContent || '{}') as IPageConfig;
  } catch {
    return null;
  }
}

function cookie(name: string): string {
  const match = document.cookie.match(new RegExp(`(?:^|;\\s*)${name}=([^;]*)`));
  return match ? decodeURIComponent(match[1]) : '';
}

/** Resolves to whether the server took the interrupt (false when the extension did). */
export function interruptKernel(kernelId: string | null): Promise<boolean> {
  const event = new CustomEvent('jupyter-agent:interrupt', {
    detail: { kernelId },
    cancelable: true
  });
  if (!document.dispatchEvent(event) || !kernelId)
    return Promise.resolve(false);
  const config = pageConfig();
  if (!config) return Promise.resolve(false);
  let base = config.baseUrl || '/';
  if (!base.endsWith('/')) base += '/';
  const headers: Record<string, string> = {
    'Content-Type': 'application/json'
  };
  const xsrf = cookie('_xsrf');
  if (xsrf) headers['X-XSRFToken'] = xsrf;
  if (config.token) headers.Authorization = `token ${config.token}`;
  return fetch(`${base}api/kernels/${encodeURIComponent(kernelId)}/interrupt`, {
    method: 'POST',
    headers,
    credentials: 'same-origin'
  }).then(
    response => response.ok,
    () => false
  );
}
