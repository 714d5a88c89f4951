"""An unrendered Helm/Go template is one marked DecodeError; template text inside a value is not."""

from __future__ import annotations

import pytest
from draguard.k8s import TEMPLATE_MESSAGE, UNRENDERED_TEMPLATE, decode_text

CLAIM = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: {name}\nspec: {{}}\n"


@pytest.mark.parametrize(("text", "line"), [
    ("{{- if .Values.on }}\n" + CLAIM.format(name="x") + "{{- end }}\n", 1),  # YAML refuses it
    (CLAIM.format(name="{{ .Release.Name }}-gpu"), 4),  # YAML refuses it
    (CLAIM.format(name="{{ .Values.name }}"), 4),  # YAML reads a flow mapping as a key: nonsense
    ('{"kind": "ResourceClaim", "metadata": {"name": {{ .Values.n | quote }}}}', 1),  # JSON too
])
def test_unrendered_templates_are_one_marked_finding(text: str, line: int) -> None:
    result = decode_text(text, "t.yaml")
    assert result.documents == []
    (finding,) = result.findings
    assert finding.message.startswith(TEMPLATE_MESSAGE) and finding.extra[UNRENDERED_TEMPLATE] is True
    assert (finding.file, finding.line) == ("t.yaml", line)


@pytest.mark.parametrize("text", [
    # Go template text as a string value: the API server stores it, draguard reads it
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  t: '{{ .CommonLabels.alertname }}'\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  t: |\n    {{ range .Alerts }}{{ end }}\n",
    # `{{` only in a comment, and a broken file without any `{{`: an ordinary DecodeError
    "# rendered from {{ .Chart.Name }}\n" + CLAIM.format(name="x"),
])
def test_template_text_in_values_and_comments_is_not_a_template(text: str) -> None:
    result = decode_text(text, "t.yaml")
    assert len(result.documents) == 1 and result.findings == []


def test_broken_yaml_without_braces_keeps_its_own_message() -> None:
    (finding,) = decode_text("a: [1\n", "t.yaml").findings
    assert UNRENDERED_TEMPLATE not in finding.extra and "not valid YAML" in finding.message
