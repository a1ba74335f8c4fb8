"""jupyter-ai-tools 0.7.0's ``notebook_json_to_md``, re-implemented for the context-size
benchmark (``peers.py``), for when ``jupyter-ai-tools`` is not installed: the notebook as
Markdown, its metadata and each cell's as YAML blocks, sources and (when asked) outputs
fenced. Each function names the one it follows in ``jupyter_ai_tools/utils.py``.
"""

from __future__ import annotations

from typing import Any


def _metadata_to_md(metadata_json: dict[str, Any]) -> str:
    # jupyter_ai_tools/utils.py metadata_to_md, 0.7.0
    import yaml  # PyYAML, as theirs (installed with jupyter_server's jupyter_events)

    yaml_str = yaml.dump(metadata_json, default_flow_style=False)
    return f"```yaml\n{yaml_str}```"


def _format_outputs(outputs: list[dict[str, Any]]) -> str:
    # jupyter_ai_tools/utils.py format_outputs, 0.7.0
    result = []
    for output in outputs:
        output_type = output.get("output_type")
        if output_type == "stream":
            text = "".join(output.get("text", []))
            result.append(f"```\n{text}```")
        elif output_type == "execute_result" or output_type == "display_data":
            data = output.get("data", {})
            if "text/plain" in data:
                text = "".join(data["text/plain"])
                result.append(f"```\n{text}```")
        elif output_type == "error":
            traceback = "\n".join(output.get("traceback", []))
            result.append(f"```\n{traceback}```")
    return "\n\n".join(result)


def _cell_to_md(cell_json: dict[str, Any], index: int = 0, include_outputs: bool = True) -> str:
    # jupyter_ai_tools/utils.py cell_to_md, 0.7.0
    md_parts = [f"### Cell {index}", "#### Metadata"]
    meta = {
        "id": cell_json.get("id"),
        "type": cell_json.get("cell_type"),
        "execution_count": cell_json.get("execution_count"),
    }
    meta = {k: v for k, v in meta.items() if v is not None}
    if "metadata" in cell_json:
        for key, value in cell_json["metadata"].items():
            meta[key] = value
    md_parts.append(_metadata_to_md(meta))
    md_parts.append("#### Source")
    source = "".join(cell_json.get("source", []))
    if cell_json.get("cell_type") == "code":
        md_parts.append(f"```python\n{source}```")
    else:
        md_parts.append(f"```\n{source}```")
    if (
        include_outputs
        and cell_json.get("cell_type") == "code"
        and "outputs" in cell_json
        and cell_json["outputs"]
    ):
        md_parts.append("#### Output")
        md_parts.append(_format_outputs(cell_json["outputs"]))
    return "\n\n".join(md_parts)


def notebook_json_to_md(notebook_json: dict[str, Any], include_outputs: bool = True) -> str:
    # jupyter_ai_tools/utils.py notebook_json_to_md, 0.7.0
    md_parts = [_metadata_to_md(notebook_json.get("metadata", {}))]
    for i, cell in enumerate(notebook_json.get("cells", [])):
        md_parts.append(_cell_to_md(cell, index=i, include_outputs=include_outputs))
    return "\n\n".join(md_parts)
