/**
 * The jupyter-agent lab extension: wires its plugins into JupyterLab.
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker } from '@jupyterlab/notebook';

import { NotebookBridge } from './bridge';
import { IAgentBridge, PluginIDs } from './tokens';
import { VERSION } from './version';

/** The comm endpoint the in-kernel agent reads and edits its notebook through. */
const bridgePlugin: JupyterFrontEndPlugin<IAgentBridge> = {
  id: PluginIDs.bridge,
  description:
    'Answers the in-kernel agent on the jupyter_agent comm, for the notebook it runs in.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IConsoleTracker],
  provides: IAgentBridge,
  activate: (
    _app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    consoles: IConsoleTracker | null
  ): IAgentBridge =>
    new NotebookBridge({ notebooks, consoles, version: VERSION })
};

const plugins: JupyterFrontEndPlugin<unknown>[] = [bridgePlugin];

export default plugins;
export * from './tokens';
