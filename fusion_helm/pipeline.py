"""Reader → filters → writer: the whole post-render transform, the same for every transport.

A reader makes Documents (Helm's stream: ``kio.document.read_documents``; a ResourceList:
``kio.resource_list``), the filters transform them in turn, a writer writes them. A stream none of
whose documents any filter claims passes as it is, without loading the model or a YAML library: most
charts a post-renderer sees in a Helm pipeline have nothing for it. Of Helm's stream, only the filters
that claim one of its documents run (no filter makes what a later one claims).
"""

from fusion_helm.kio.stream import split

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fusion_helm.filters import Filter
    from fusion_helm.kio.document import Document
    from fusion_helm.options import Options


def filters(options: "Options | None" = None) -> "tuple[Filter, ...]":
    """The LeaderWorkerSets to take over first (the services they become are not expanded twice), then
    every InferenceService. OPTIONS None: the defaults (the options module then need not be loaded, as
    on a post-renderer's start-up without flags)."""
    from fusion_helm.filters.expand_services import ExpandServices
    from fusion_helm.filters.take_over import TakeOver

    return TakeOver(options), ExpandServices()


def apply(documents: "list[Document]", options: "Options | None" = None) -> "list[Document]":
    """DOCUMENTS through every filter; raises InvalidSpec on bad input."""
    from fusion_helm.collector import paused

    with paused():
        for step in filters(options):
            documents = step(documents)
        return documents


def render(text: str, options: "Options | None" = None) -> str:
    """Expand every InferenceService (and taken-over LeaderWorkerSet) in a multi-document stream;
    raises InvalidSpec on bad input."""
    return render_advised(text, options, advise=False)[0]


def render_advised(text: str, options: "Options | None" = None, advise: bool = True) -> tuple[str, list[str]]:
    """The stream expanded as `render` does, and (ADVISE) what `fusion-helm validate` warns of in it: what
    renders and installs but would serve badly (fusion_helm.advice)."""
    chunks = split(text)
    steps = [step for step in filters(options) if any(step.claims(chunk) for chunk in chunks)]
    if not steps:
        return text, []
    from fusion_helm.collector import paused
    from fusion_helm.kio.document import read_documents, write_documents

    with paused():
        documents = read_documents(chunks)
        for step in steps:
            documents = step(documents)
        if not advise:
            return write_documents(documents), []
        from fusion_helm.advice import stream_warnings

        return write_documents(documents), stream_warnings(documents)
