"""Keyset paging parameters of the list pages (``page_size`` and ``cursor``)."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest

from catalog_admin.selectors.pagination import page_size

__all__ = ("PAGE_SIZE_OPTIONS", "Paging")

PAGE_SIZE_OPTIONS = (25, 50, 100, 200)


@dataclass(frozen=True)
class Paging:
    """The requested page: its size (validated, 400 when malformed) and the opaque cursor ('' = first page)."""

    size: int
    cursor: str

    @classmethod
    def from_request(cls, request: HttpRequest) -> Paging:
        return cls(size=page_size(request.GET.get("page_size") or None), cursor=request.GET.get("cursor", ""))

    @property
    def is_first_page(self) -> bool:
        return not self.cursor

    @property
    def size_options(self) -> tuple[int, ...]:
        return PAGE_SIZE_OPTIONS if self.size in PAGE_SIZE_OPTIONS else tuple(sorted((*PAGE_SIZE_OPTIONS, self.size)))
