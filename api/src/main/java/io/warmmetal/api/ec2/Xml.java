package io.warmmetal.api.ec2;

import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.util.function.Consumer;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/** An EC2 answer being written: elements in EC2's namespace, escaped by the JDK's StAX writer. */
final class Xml {
  static final String NAMESPACE = "http://ec2.amazonaws.com/doc/2016-11-15/";
  private static final XMLOutputFactory FACTORY = XMLOutputFactory.newFactory();

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final XMLStreamWriter writer;

  private Xml() {
    try {
      writer = FACTORY.createXMLStreamWriter(bytes, "UTF-8");
      writer.writeStartDocument("UTF-8", "1.0");
    } catch (XMLStreamException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code <ActionResponse xmlns=…><requestId>…</requestId>}, to be followed by the answer. */
  static Xml response(String action, String requestId) {
    Xml xml = new Xml();
    xml.call(
        () -> {
          xml.writer.writeStartElement(action + "Response");
          xml.writer.writeDefaultNamespace(NAMESPACE);
        });
    return xml.text("requestId", requestId);
  }

  /** EC2's error document: {@code <Response><Errors><Error><Code>…}. */
  static Xml error(String code, String message, String requestId) {
    Xml xml = new Xml();
    xml.call(() -> xml.writer.writeStartElement("Response"));
    return xml.open("Errors")
        .open("Error")
        .text("Code", code)
        .text("Message", message)
        .close()
        .close()
        .text("RequestID", requestId);
  }

  Xml open(String name) {
    return call(() -> writer.writeStartElement(name));
  }

  Xml close() {
    return call(writer::writeEndElement);
  }

  /** {@code <name>value</name>}; nothing if the value is null. */
  Xml text(String name, Object value) {
    if (value == null) {
      return this;
    }
    return call(
        () -> {
          writer.writeStartElement(name);
          writer.writeCharacters(String.valueOf(value));
          writer.writeEndElement();
        });
  }

  /** {@code <name><item>…</item>…</name>}, each item written by {@code item}. */
  <T> Xml set(String name, Iterable<T> items, Consumer<T> item) {
    open(name);
    for (T t : items) {
      open("item");
      item.accept(t);
      close();
    }
    return close();
  }

  /** {@code <name><item>value</item>…</name>}. */
  Xml values(String name, Iterable<?> values) {
    open(name);
    values.forEach(v -> text("item", v));
    return close();
  }

  Buffer finish() {
    call(writer::writeEndDocument);
    call(writer::close);
    return Buffer.buffer(bytes.toByteArray());
  }

  private interface XmlStep {
    void run() throws XMLStreamException;
  }

  private Xml call(XmlStep step) {
    try {
      step.run();
    } catch (XMLStreamException e) {
      throw new IllegalStateException("writing an EC2 answer", e);
    }
    return this;
  }
}
