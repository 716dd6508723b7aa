package io.warmmetal.cli.output;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** kubectl's table: upper-case headers, columns padded to their widest cell, three spaces apart. */
public final class Table {
  private static final String GAP = "   ";
  private final List<String> headers;
  private final List<List<String>> rows = new ArrayList<>();

  public Table(List<String> headers) {
    this.headers = headers;
  }

  public void add(List<String> row) {
    rows.add(row);
  }

  public void print(PrintWriter out) {
    int[] widths = new int[headers.size()];
    for (int i = 0; i < widths.length; i++) {
      widths[i] = headers.get(i).length();
      for (List<String> row : rows) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    line(out, headers, widths);
    rows.forEach(r -> line(out, r, widths));
  }

  private static void line(PrintWriter out, List<String> cells, int[] widths) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      b.append(cells.get(i));
      if (i < cells.size() - 1) {
        b.append(" ".repeat(widths[i] - cells.get(i).length())).append(GAP);
      }
    }
    out.println(b);
  }
}
