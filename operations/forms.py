"""Forms of the change-request pages: the request itself (metastore + Hive DDL) and the execution confirmation."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from operations.ddl.parser import DdlParseError, parse_alter

__all__ = ("ChangeRequestForm", "ExecuteForm", "MergeForm")


def _metastore_choices() -> list[tuple[str, str]]:
    return [(config.name, config.name) for config in settings.METASTORE_CONFIGS]


class ChangeRequestForm(forms.Form):
    """One ALTER TABLE statement on one metastore, and why; ``cleaned_data["spec"]`` is the parsed operation."""

    metastore = forms.ChoiceField(choices=_metastore_choices)
    statement = forms.CharField(
        label="Hive DDL",
        strip=True,
        widget=forms.Textarea(
            attrs={
                "rows": 5,
                "spellcheck": "false",
                "class": "mono",
                "autocomplete": "off",
                "placeholder": "ALTER TABLE sales.customers RENAME TO sales.clients",
            }  # fmt: skip
        ),
    )
    reason = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "Why this change is needed (shown to approvers)"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.parse_error: DdlParseError | None = None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        statement = cleaned.get("statement")
        if statement:
            try:
                cleaned["spec"] = parse_alter(statement)
            except DdlParseError as exc:
                self.parse_error = exc
                self.add_error("statement", exc.message)
        return cleaned


class ExecuteForm(forms.Form):
    """The confirmation before anything runs: an unticked box, and for scheduling the time to run at."""

    confirm = forms.BooleanField(
        required=True,
        label="I have read the preview above and want exactly this to run on the metastore.",
        error_messages={"required": "Tick the confirmation box: nothing runs without it."},
    )
    at = forms.DateTimeField(
        required=False,
        label="Run at (UTC)",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )

    def __init__(self, *args: Any, schedule: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.schedule = schedule
        if schedule:
            self.fields["at"].required = True
            self.fields["at"].error_messages["required"] = "Say when the change should run."
        else:
            del self.fields["at"]


class MergeForm(forms.Form):
    """A merge of databases of one metastore into another: ``cleaned_data["merge"]`` is the checked MergeRequest,
    ``cleaned_data["operation"]`` the operation a change request on it stores."""

    source = forms.ChoiceField(choices=_metastore_choices, help_text="Import from")
    target = forms.ChoiceField(choices=_metastore_choices, help_text="Import into (the request lives here)")
    databases = forms.CharField(
        required=False, widget=forms.TextInput(attrs={"placeholder": "sales, marketing (empty: all)"})
    )
    renames = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "class": "mono", "placeholder": "sales=sales_legacy (one a line)"}),
    )
    location_rules = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 2, "class": "mono", "placeholder": "hdfs://old-ns/warehouse=hdfs://new-ns/warehouse"}
        ),
    )
    reason = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "Why this merge is needed (shown to approvers)"}),
    )

    def clean(self) -> dict[str, Any]:
        from catalog_admin.errors import ApplicationError
        from operations.merge.workflow import merge_operation, merge_request_from_dict

        cleaned = super().clean()
        if "source" in cleaned and "target" in cleaned:
            try:
                cleaned["merge"] = merge_request_from_dict(
                    {
                        "source": cleaned["source"],
                        "target": cleaned["target"],
                        "databases": cleaned.get("databases", ""),
                        "renames": (cleaned.get("renames") or "").split(),
                        "location_rules": (cleaned.get("location_rules") or "").split(),
                    }
                )
            except ApplicationError as exc:
                self.add_error(None, exc.message)
            else:
                cleaned["operation"] = merge_operation(cleaned["merge"])
        return cleaned
