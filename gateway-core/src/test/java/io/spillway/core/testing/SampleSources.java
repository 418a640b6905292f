package io.spillway.core.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * Large, deterministic source files with a stack trace pasted below them, as users send them: for
 * tests of context trimming through the shaping stage and the whole gateway.
 */
public final class SampleSources {
  /** The name of the function the trace of {@link #pythonModuleWithTraceback} fails in. */
  public static final String FAILING_FUNCTION = "def reconcile_ledger(self, entries, as_of):";
  public static final String TRACE_LAST_LINE = "ZeroDivisionError: division by zero";

  private SampleSources() {}

  /**
   * A Python module of exactly {@code lines} lines (services with methods, helpers, comments, blank
   * lines) and, after it, the traceback of a failure in {@code reconcile_ledger}, which is defined near
   * the top of the file.
   */
  public static String pythonModuleWithTraceback(int lines) {
    List<String> out = new ArrayList<>();
    out.add("\"\"\"Ledger services for the billing backend.\"\"\"");
    out.add("import decimal");
    out.add("import logging");
    out.add("from dataclasses import dataclass");
    out.add("");
    out.add("log = logging.getLogger(__name__)");
    out.add("");
    out.add("");
    out.add("class LedgerService:");
    out.add("    \"\"\"Reconciles ledgers against bank statements.\"\"\"");
    out.add("");
    out.add("    def __init__(self, store):");
    out.add("        self.store = store");
    out.add("");
    out.add("    " + FAILING_FUNCTION);
    out.add("        # entries after as_of belong to the next period");
    out.add("        window = [e for e in entries if e.booked_at <= as_of]");
    out.add("        total = sum(e.amount for e in window)");
    out.add("        average = total / len(window)");
    out.add("        log.info(\"reconciled %d entries, average %s\", len(window), average)");
    out.add("        return total");
    out.add("");
    List<String> tail = List.of("", "def main():", "    service = LedgerService(store=None)",
        "    print(service.reconcile_ledger([], as_of=None))", "");
    int traceLines = 9;
    int room = lines - tail.size() - traceLines;
    int service = 0;
    while (out.size() + 4 + 12 <= room) {
      service++;
      out.add("");
      out.add("class Service" + service + ":");
      out.add("    \"\"\"Service number " + service + ".\"\"\"");
      out.add("");
      for (int m = 0; m < 6 && out.size() + 12 <= room; m++) {
        out.add("    def handle_" + service + "_" + m + "(self, request, limit=" + (m + 10) + "):");
        out.add("        # validate the request before touching the store");
        out.add("        if request is None:");
        out.add("            raise ValueError(\"request is required\")");
        out.add("        items = self.store.load(request.key, limit=limit)");
        out.add("        result = []");
        out.add("        for item in items:");
        out.add("            if item.amount > " + (m * 7 + service) + ":");
        out.add("                result.append(item.normalize())");
        out.add("        log.debug(\"handled %s\", request.key)");
        out.add("        return result");
        out.add("");
      }
    }
    while (out.size() < room) {
      out.add("# end of services");
    }
    out.addAll(tail);
    out.add("Traceback (most recent call last):");
    out.add("  File \"/srv/billing/ledger.py\", line " + (lines - 8) + ", in <module>");
    out.add("    main()");
    out.add("  File \"/srv/billing/ledger.py\", line " + (lines - 11) + ", in main");
    out.add("    print(service.reconcile_ledger([], as_of=None))");
    out.add("  File \"/srv/billing/ledger.py\", line 19, in reconcile_ledger");
    out.add("    average = total / len(window)");
    out.add("              ~~~~~~^~~~~~~~~~~~~");
    out.add(TRACE_LAST_LINE);
    return String.join("\n", out) + "\n";
  }

  /** The traceback lines {@link #pythonModuleWithTraceback} ends with. */
  public static List<String> traceback(String source) {
    List<String> lines = List.of(source.split("\n"));
    int start = lines.indexOf("Traceback (most recent call last):");
    return lines.subList(start, lines.size());
  }
}
