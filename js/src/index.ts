/**
 * The jupyter-agent lab extension: wires its plugins into JupyterLab.
 */
import {
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IConsoleTracker } from '@jupyterlab/console';
import {
  INotebookTracker,
  INotebookWidgetFactory,
  type NotebookPanel,
  type NotebookWidgetFactory
} from '@jupyterlab/notebook';

import { NotebookBridge } from './bridge';
import { KernelControls } from './control';
import { AgentSidebar, agentIcon } from './sidebar';
import {
  CommandIDs,
  IAgentBridge,
  type IControlDetail,
  frontendOf,
  IKernelControls,
  PanelEvents,
  PluginIDs
} from './tokens';
import { VERSION } from './version';

/** The comm endpoint the in-kernel agent reads and edits its notebook through. */
const bridgePlugin: JupyterFrontEndPlugin<IAgentBridge> = {
  id: PluginIDs.bridge,
  description:
    'Answers the in-kernel agent on the jupyter_agent comm, for the notebook it runs in.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IConsoleTracker, INotebookWidgetFactory, IKernelControls],
  provides: IAgentBridge,
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    consoles: IConsoleTracker | null,
    notebookFactory: NotebookWidgetFactory.IFactory | null,
    controls: IKernelControls | null
  ): IAgentBridge =>
    new NotebookBridge({
      notebooks,
      consoles,
      controls,
      version: VERSION,
      frontend: frontendOf(app.name),
      serverRoot: pageOption('serverRoot'),
      // jupyter-collaboration sets the factory's content provider when it
      // activates, which may be after this plugin: read it at each save.
      saveRoute: {
        contents: app.serviceManager.contents,
        contentProviderId: () => notebookFactory?.contentProviderId
      }
    })
};

/** A string option of the page's config (`jupyter-config-data`); '' when unsaid. */
function pageOption(name: string): string {
  try {
    const node = document.getElementById('jupyter-config-data');
    const value = (
      JSON.parse(node?.textContent || '{}') as Record<string, unknown>
    )[name];
    return typeof value === 'string' ? value : '';
  } catch {
    return '';
  }
}

/** The notebook whose kernel has id `kernelId`, if one is open. */
function notebookOfKernel(
  notebooks: INotebookTracker,
  kernelId: unknown
): NotebookPanel | null {
  if (typeof kernelId !== 'string' || kernelId === '') {
    return null;
  }
  return (
    notebooks.find(
      panel =>
        !panel.isDisposed &&
        panel.sessionContext.session?.kernel?.id === kernelId
    ) ?? null
  );
}

/** The agent panel docked in the right sidebar, following the active notebook. */
const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.sidebar,
  description:
    "Docks the active notebook's agent panel in the right sidebar ('Agent: Open panel', %agent --side).",
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, ILayoutRestorer, IKernelControls],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    controls: IKernelControls | null
  ): void => {
    const sidebar = new AgentSidebar(notebooks, controls);
    app.shell.add(sidebar, 'right', { rank: 650 });
    restorer?.add(sidebar, sidebar.id);

    app.commands.addCommand(CommandIDs.openPanel, {
      label: 'Agent: Open panel',
      caption: "Show the active notebook's agent in the right sidebar",
      icon: agentIcon,
      execute: async () => {
        app.shell.activateById(sidebar.id);
        await sidebar.showAgentOf(notebooks.currentWidget);
      }
    });
    palette?.addItem({ command: CommandIDs.openPanel, category: 'Agent' });

    // `%agent --side`: a view of the panel asks to be docked.
    document.addEventListener(PanelEvents.dock, event => {
      const detail = (event as CustomEvent).detail ?? {};
      const notebook = notebookOfKernel(notebooks, detail.kernelId);
      if (notebook === null || typeof detail.widgetId !== 'string') {
        return; // not a notebook of this page: the view stays where it is
      }
      event.preventDefault();
      if (sidebar.notebook !== notebook || !sidebar.isVisible) {
        // Shown, not focused: the user stays in the notebook where the run started.
        sidebar.focusOnActivate = false;
        try {
          app.shell.activateById(sidebar.id);
        } finally {
          sidebar.focusOnActivate = true;
        }
      }
      void sidebar.showAgentOf(notebook, detail.widgetId);
    });
  }
};

/**
 * The panel's messages to its kernel, over the agent's subshell: the kernel reads them
 * while the user's cell runs, where the widget's own comm waits for the cell to end.
 */
const controlPlugin: JupyterFrontEndPlugin<IKernelControls> = {
  id: PluginIDs.control,
  description:
    "Sends the agent panel's messages to its kernel over a kernel subshell of its own.",
  autoStart: true,
  requires: [INotebookTracker],
  provides: IKernelControls,
  activate: (
    _app: JupyterFrontEnd,
    notebooks: INotebookTracker
  ): IKernelControls => {
    const controls = new KernelControls();
    document.addEventListener(PanelEvents.control, event => {
      const detail = (event as CustomEvent<Partial<IControlDetail>>).detail;
      const kernel =
        notebookOfKernel(notebooks, detail?.kernelId)?.sessionContext.session
          ?.kernel ?? null;
      if (kernel === null || !detail?.commId || !detail.message) {
        return; // the view sends through its widget's comm
      }
      event.preventDefault();
      const control = controls.of(kernel);
      control.sawPanel(detail.commId); // for the sidebar: no need to ask the kernel
      // What ipywidgets' WidgetModel.send(content) puts on the wire (no buffers).
      control.send(detail.commId, {
        method: 'custom',
        content: detail.message
      });
      detail.subshell = control.subshell;
      detail.known = control.known;
    });
    return controls;
  }
};

/**
 * Stop while the agent runs a cell, where the panel's messages cannot go over the
 * agent's subshell: the kernel reads no comm message until the cell ends, so the
 * panel asks the frontend to interrupt the kernel.
 */
const interruptPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.interrupt,
  description:
    "Interrupts a notebook's kernel when its agent panel's Stop is clicked during a cell run.",
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, notebooks: INotebookTracker): void => {
    document.addEventListener(PanelEvents.interrupt, event => {
      const detail = (event as CustomEvent).detail ?? {};
      const kernel =
        notebookOfKernel(notebooks, detail.kernelId)?.sessionContext.session
          ?.kernel ?? null;
      if (kernel === null) {
        return; // the panel uses the server's interrupt endpoint itself
      }
      event.preventDefault();
      kernel.interrupt().catch(error => {
        console.warn('jupyter-agent: could not interrupt the kernel', error);
      });
    });
  }
};

/**
 * A cell link on an approval card: show that cell in its notebook (activate it, make it
 * the active cell, scroll it into view).
 */
const revealCellPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.revealCell,
  description:
    'Scrolls to the cell an approval card names when its link is clicked.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, notebooks: INotebookTracker): void => {
    document.addEventListener(PanelEvents.revealCell, event => {
      const detail = (event as CustomEvent).detail ?? {};
      if (typeof detail.cellId !== 'string') return;
      const target = event.target instanceof Node ? event.target : null;
      const notebook =
        notebookOfKernel(notebooks, detail.kernelId) ??
        notebooks.find(panel => target !== null && panel.node.contains(target));
      const index =
        notebook?.content.widgets.findIndex(
          cell => cell.model.id === detail.cellId
        ) ?? -1;
      if (!notebook || index < 0) return; // the link still names the cell on hover
      event.preventDefault();
      app.shell.activateById(notebook.id);
      notebook.content.activeCellIndex = index;
      void notebook.content.scrollToCell(
        notebook.content.widgets[index],
        'center'
      );
    });
  }
};

/**
 * The "Open <notebook>" link of the panel's choice before resuming a session of another
 * notebook: open that notebook here (JupyterLab: a tab in this window; Notebook 7: its
 * own page), rather than the link's new browser tab.
 */
const openNotebookPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.openNotebook,
  description:
    'Opens the notebook a past session worked on, from the panel’s session choice.',
  autoStart: true,
  activate: (app: JupyterFrontEnd): void => {
    document.addEventListener(PanelEvents.openNotebook, event => {
      const detail = (event as CustomEvent).detail ?? {};
      if (typeof detail.path !== 'string' || !detail.path) return;
      if (!app.commands.hasCommand('docmanager:open')) return;
      event.preventDefault();
      app.commands
        .execute('docmanager:open', { path: detail.path })
        .catch(error => {
          console.warn('jupyter-agent: could not open', detail.path, error);
        });
    });
  }
};

const plugins: JupyterFrontEndPlugin<unknown>[] = [
  controlPlugin,
  bridgePlugin,
  sidebarPlugin,
  interruptPlugin,
  revealCellPlugin,
  openNotebookPlugin
];

export default plugins;
export * from './tokens';
