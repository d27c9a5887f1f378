/**
 * The smallest office documents each format's specification allows, written here (ECMA-376 for
 * DOCX, XLSX and PPTX; OASIS OpenDocument for ODT): real files a word processor opens, with text
 * the tests then look for in the PDF LibreOffice makes of them.
 */
import { strToU8, zipSync } from "fflate";

const xml = (body: string) => strToU8(`<?xml version="1.0" encoding="UTF-8"?>${body}`);
const types = (overrides: Record<string, string>) =>
  xml(
    `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
      `<Default Extension="xml" ContentType="application/xml"/>` +
      Object.entries(overrides)
        .map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`)
        .join("") +
      `</Types>`,
  );
const rels = (entries: [string, string, string][]) =>
  xml(
    `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
      entries
        .map(
          ([id, type, target]) =>
            `<Relationship Id="${id}" ` +
            `Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/${type}" Target="${target}"/>`,
        )
        .join("") +
      `</Relationships>`,
  );

export function docx(text: string): Uint8Array {
  return zipSync({
    "[Content_Types].xml": types({
      "/word/document.xml": "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
    }),
    "_rels/.rels": rels([["rId1", "officeDocument", "word/document.xml"]]),
    "word/document.xml": xml(
      `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r` +
        `><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`,
    ),
  });
}

export function xlsx(label: string, value: number): Uint8Array {
  return zipSync({
    "[Content_Types].xml": types({
      "/xl/workbook.xml": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
      "/xl/worksheets/sheet1.xml": "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml",
    }),
    "_rels/.rels": rels([["rId1", "officeDocument", "xl/workbook.xml"]]),
    "xl/workbook.xml": xml(
      `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
        `xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet ` +
        `name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ),
    "xl/_rels/workbook.xml.rels": rels([["rId1", "worksheet", "worksheets/sheet1.xml"]]),
    "xl/worksheets/sheet1.xml": xml(
      `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row ` +
        `r="1"><c r="A1" t="inlineStr"><is><t>${label}</t></is></c><c r="B1"><v>${value}</v></c></row></sheet` +
        `Data></worksheet>`,
    ),
  });
}

export function pptx(title: string): Uint8Array {
  return zipSync({
    "[Content_Types].xml": types({
      "/ppt/presentation.xml": "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
      "/ppt/slides/slide1.xml": "application/vnd.openxmlformats-officedocument.presentationml.slide+xml",
    }),
    "_rels/.rels": rels([["rId1", "officeDocument", "ppt/presentation.xml"]]),
    "ppt/presentation.xml": xml(
      `<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" ` +
        `xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:sldIdLst><p:sldId ` +
        `id="256" r:id="rId2"/></p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" ` +
        `cy="9144000"/></p:presentation>`,
    ),
    "ppt/_rels/presentation.xml.rels": rels([["rId2", "slide", "slides/slide1.xml"]]),
    "ppt/slides/slide1.xml": xml(
      `<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openx` +
        `mlformats.org/presentationml/2006/main"><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" ` +
        `name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/><p:sp><p:nvSpPr><p:cNvPr id="2" ` +
        `name="Title"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="457200" y="457200"/><a:ext ` +
        `cx="8229600" cy="1143000"/></a:xfrm></p:spPr><p:txBody><a:bodyPr/><a:p><a:r><a:t>${title}` +
        `</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`,
    ),
  });
}

export function odt(text: string): Uint8Array {
  return zipSync({
    mimetype: [strToU8("application/vnd.oasis.opendocument.text"), { level: 0 }],
    "META-INF/manifest.xml": xml(
      `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" ` +
        `manifest:version="1.2"><manifest:file-entry manifest:full-path="/" ` +
        `manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry ` +
        `manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`,
    ),
    "content.xml": xml(
      `<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ` +
        `xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"><office:body><offic` +
        `e:text><text:p>${text}</text:p></office:text></office:body></office:document-content>`,
    ),
  });
}
