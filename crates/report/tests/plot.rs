//! Plots from CSV tables: what reaches the SVG and the PNG, and what the data preparation
//! selects, scales and refuses.

use std::path::Path;

use flashbuf_report::CsvTable;
use flashbuf_report::plot::{
    Aggregate, ChartKind, Filter, PlotError, PlotSpec, SeriesData, output_paths, plot, prepare, render_png, render_svg,
};

/// A small result file in the shape `flashbuf run --output csv` writes (a subset of columns).
const RESULTS: &str = "\
trace,policy,policy_name,buffer_pages,device,hit_ratio,page_writes,device_time_us
zipf,lru,lru,512,ideal/micron,0.25,1000,2500000
zipf,lru,lru,1024,ideal/micron,0.5,800,2000000
zipf,cflru:w=0.25,cflru,512,ideal/micron,0.24,900,2400000
zipf,cflru:w=0.25,cflru,1024,ideal/micron,0.49,700,1900000
zipf,cflru:w=0.5,cflru,512,ideal/micron,0.23,850,2300000
zipf,cflru:w=0.5,cflru,1024,ideal/micron,0.48,650,1800000
uniform,lru,lru,512,ideal/micron,0.05,3000,7000000
uniform,lru,lru,1024,ideal/micron,0.1,2900,6900000
";

fn table() -> CsvTable {
    CsvTable::from_reader(RESULTS.as_bytes(), "results.csv").unwrap()
}

fn spec(x: &str, y: &str, series: &[&str], filters: &[&str]) -> PlotSpec {
    let mut s = PlotSpec::new(x, y);
    s.series = series.iter().map(|c| c.to_string()).collect();
    s.filters = filters.iter().map(|f| f.parse::<Filter>().unwrap()).collect();
    s
}

/// The text content of every `<text>` element.
fn svg_texts(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        let after = &rest[start..];
        let open_end = after.find('>').expect("a complete start tag");
        let close = after.find("</text>").expect("every text element is closed");
        out.push(after[open_end + 1..close].trim().to_string());
        rest = &after[close + 7..];
    }
    out
}

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    (w, h)
}

/// The decoded RGB pixels of a PNG.
fn png_pixels(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn svg_holds_axis_labels_with_units_ticks_and_legend_entries() {
    let s = spec("buffer_pages", "page_writes", &["policy"], &["trace=zipf"]);
    let data = prepare(&table(), &s).unwrap();
    let svg = render_svg(&data, &s).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    let texts = svg_texts(&svg);
    for expected in ["buffer size (pages)", "page writes", "lru", "cflru:w=0.25", "cflru:w=0.5", "512", "1,024"] {
        assert!(texts.iter().any(|t| t == expected), "no text '{expected}' in {texts:?}");
    }
    assert!(svg.contains("width=\"800\" height=\"500\""));
}

#[test]
fn png_has_the_requested_size_and_its_text_is_drawn_with_the_bundled_font() {
    let mut s = spec("buffer_pages", "hit_ratio", &["policy"], &["trace=zipf"]);
    (s.width, s.height) = (640, 400);
    s.title = Some("Zipf trace".into());
    let data = prepare(&table(), &s).unwrap();
    let bytes = render_png(&data, &s).unwrap();
    assert_eq!(png_size(&bytes), (640, 400));
    let (w, h, px) = png_pixels(&bytes);
    assert_eq!((w, h), (640, 400));
    // The title band holds nothing but the title's text: dark, anti-aliased pixels there prove
    // the glyphs were rasterised (plotters has no font but the one bundled and registered).
    let title_rows = 6..26usize;
    let dark = title_rows
        .flat_map(|y| (0..w as usize).map(move |x| (y, x)))
        .filter(|&(y, x)| {
            let i = (y * w as usize + x) * 3;
            px[i] < 100 && px[i + 1] < 100 && px[i + 2] < 100
        })
        .count();
    let grey = (6..26usize)
        .flat_map(|y| (0..w as usize).map(move |x| (y, x)))
        .filter(|&(y, x)| {
            let v = px[(y * w as usize + x) * 3];
            v > 60 && v < 200
        })
        .count();
    assert!(dark > 50, "title glyphs: {dark} dark pixels");
    assert!(grey > 20, "anti-aliased edges: {grey} grey pixels");
    // Every series colour appears (the legend and the lines).
    for rgb in [[0u8, 114, 178], [213, 94, 0], [0, 158, 115]] {
        assert!(px.chunks(3).any(|p| p == rgb), "colour {rgb:?} missing");
    }
}

#[test]
fn plot_writes_svg_and_png_atomically_and_replaces_a_known_extension() {
    let dir = tempfile::tempdir().unwrap();
    let s = spec("buffer_pages", "page_writes", &["policy"], &["trace=zipf"]);
    let paths = plot(&table(), &s, &dir.path().join("fig.png")).unwrap();
    assert_eq!(paths, output_paths(&dir.path().join("fig")));
    assert!(std::fs::read_to_string(&paths[0]).unwrap().starts_with("<svg"));
    assert_eq!(png_size(&std::fs::read(&paths[1]).unwrap()), (800, 500));
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
}

#[test]
fn param_columns_read_policy_parameters() {
    let s = spec("param:w", "page_writes", &["buffer_pages"], &["trace=zipf"]);
    let data = prepare(&table(), &s).unwrap();
    assert_eq!(data.x_label, "parameter w");
    // lru has no w: its rows are left out.
    assert_eq!(
        data.series,
        [
            SeriesData { label: "buffer_pages=512".into(), points: vec![(0.25, 900.0), (0.5, 850.0)] },
            SeriesData { label: "buffer_pages=1024".into(), points: vec![(0.25, 700.0), (0.5, 650.0)] },
        ]
    );
    // As a filter, too.
    let s = spec("buffer_pages", "page_writes", &[], &["param:w=0.5"]);
    let data = prepare(&table(), &s).unwrap();
    assert_eq!(data.series.len(), 1);
    assert_eq!(data.series[0].points, [(512.0, 850.0), (1024.0, 650.0)]);
    assert_eq!(data.series[0].label, "page writes");
}

#[test]
fn filters_and_across_columns_or_within_one_and_match_numbers_numerically() {
    let t = table();
    let s = spec("buffer_pages", "page_writes", &["trace"], &["policy=lru"]);
    let d = prepare(&t, &s).unwrap();
    assert_eq!(d.series.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(), ["zipf", "uniform"]);
    let s = spec("buffer_pages", "page_writes", &["policy"], &["trace=zipf", "policy=lru", "policy=cflru:w=0.5"]);
    let d = prepare(&t, &s).unwrap();
    assert_eq!(d.series.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(), ["lru", "cflru:w=0.5"]);
    let s = spec("buffer_pages", "page_writes", &["policy"], &["trace=zipf", "buffer_pages=512.0"]);
    let d = prepare(&t, &s).unwrap();
    assert!(d.series.iter().all(|s| s.points.len() == 1 && s.points[0].0 == 512.0));
}

#[test]
fn known_columns_are_scaled_for_reading() {
    let s = spec("buffer_pages", "hit_ratio", &[], &["trace=uniform"]);
    let d = prepare(&table(), &s).unwrap();
    assert_eq!(d.y_label, "hit ratio (%)");
    assert_eq!(d.series[0].points, [(512.0, 5.0), (1024.0, 10.0)]);
    let s = spec("buffer_pages", "device_time_us", &[], &["trace=uniform"]);
    let d = prepare(&table(), &s).unwrap();
    assert_eq!(d.y_label, "device time (s)");
    let ys: Vec<f64> = d.series[0].points.iter().map(|p| p.1).collect();
    assert!((ys[0] - 7.0).abs() < 1e-12 && (ys[1] - 6.9).abs() < 1e-12, "{ys:?}");
    let mut s = spec("buffer_pages", "hit_ratio", &[], &["trace=uniform"]);
    s.y.push("page_writes".into());
    s.y_label = Some("mixed".into());
    let d = prepare(&table(), &s).unwrap();
    assert_eq!(d.y_label, "mixed");
    assert_eq!(d.series.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(), ["hit ratio (%)", "page writes"]);
}

#[test]
fn bar_charts_take_categories_and_sort_numeric_ones() {
    let mut s = spec("policy", "page_writes", &["buffer_pages"], &["trace=zipf"]);
    s.kind = ChartKind::Bar;
    let d = prepare(&table(), &s).unwrap();
    assert_eq!(d.categories, ["lru", "cflru:w=0.25", "cflru:w=0.5"]);
    assert_eq!(d.series[0].points, [(0.0, 1000.0), (1.0, 900.0), (2.0, 850.0)]);
    let svg = render_svg(&d, &s).unwrap();
    assert!(svg_texts(&svg).iter().any(|t| t == "cflru:w=0.25"));
    let mut s = spec("buffer_pages", "page_writes", &["policy"], &["trace=zipf"]);
    s.kind = ChartKind::Bar;
    assert_eq!(prepare(&table(), &s).unwrap().categories, ["512", "1024"]);
    s.log_x = true;
    assert!(matches!(prepare(&table(), &s), Err(PlotError::Spec(_))));
}

#[test]
fn unknown_columns_list_the_columns_and_policy_parameters() {
    let e = prepare(&table(), &spec("buffer_size", "page_writes", &[], &[])).unwrap_err().to_string();
    assert!(e.contains("unknown column 'buffer_size'"), "{e}");
    assert!(e.contains("buffer_pages, device, hit_ratio") && e.contains("param:w"), "{e}");
    let e = prepare(&table(), &spec("param:min_lc", "page_writes", &[], &[])).unwrap_err().to_string();
    assert!(e.contains("policy parameters in this file: w"), "{e}");
    let e = prepare(&table(), &spec("buffer_pages", "page_writes", &["polcy"], &[])).unwrap_err().to_string();
    assert!(e.contains("'polcy'"), "{e}");
    let e = prepare(&table(), &spec("buffer_pages", "page_writes", &[], &["tracee=zipf"])).unwrap_err().to_string();
    assert!(e.contains("'tracee'"), "{e}");
}

#[test]
fn an_empty_selection_says_which_filter_and_which_values_exist() {
    let e = prepare(&table(), &spec("buffer_pages", "page_writes", &["policy"], &["trace=zipff"])).unwrap_err();
    assert!(matches!(e, PlotError::EmptySelection(_)));
    let e = e.to_string();
    assert!(e.contains("no row has trace=zipff") && e.contains("values of trace: zipf, uniform"), "{e}");
    let e = prepare(&table(), &spec("buffer_pages", "page_writes", &[], &["trace=uniform", "policy=cflru:w=0.5"]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no row matches all filters together"), "{e}");
    let empty = CsvTable::from_reader("a,b\n".as_bytes(), "e.csv").unwrap();
    let e = prepare(&empty, &spec("a", "b", &[], &[])).unwrap_err().to_string();
    assert!(e.contains("no data rows"), "{e}");
}

#[test]
fn non_numeric_values_name_the_line() {
    let e = prepare(&table(), &spec("buffer_pages", "device", &[], &["trace=zipf", "policy=lru"])).unwrap_err();
    match &e {
        PlotError::NotNumeric { column, value, line, .. } => {
            assert_eq!((column.as_str(), value.as_str(), *line), ("device", "ideal/micron", 2));
        }
        other => panic!("expected NotNumeric, got {other:?}"),
    }
    assert!(e.to_string().starts_with("results.csv:2: column 'device' must be numeric"), "{e}");
    // A line chart needs a numeric x; a bar chart does not.
    let e = prepare(&table(), &spec("policy", "page_writes", &[], &["trace=uniform"])).unwrap_err().to_string();
    assert!(e.contains("use a bar chart"), "{e}");
}

#[test]
fn several_rows_on_a_point_are_refused_unless_aggregated() {
    let s = spec("buffer_pages", "page_writes", &["policy"], &["policy=lru"]);
    let e = prepare(&table(), &s).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, PlotError::Ambiguous(_)));
    assert!(text.contains("2 rows of series 'lru'") && text.contains("trace (zipf | uniform)"), "{text}");
    assert!(text.contains("--aggregate"), "{text}");
    let mut s = s;
    s.aggregate = Some(Aggregate::Mean);
    assert_eq!(prepare(&table(), &s).unwrap().series[0].points, [(512.0, 2000.0), (1024.0, 1850.0)]);
    s.aggregate = Some("max".parse().unwrap());
    assert_eq!(prepare(&table(), &s).unwrap().series[0].points, [(512.0, 3000.0), (1024.0, 2900.0)]);
}

#[test]
fn log_axes_refuse_values_that_are_not_positive() {
    let t = CsvTable::from_reader("x,y\n1,5\n2,0\n".as_bytes(), "t.csv").unwrap();
    let mut s = spec("x", "y", &[], &[]);
    assert!(prepare(&t, &s).is_ok());
    s.log_y = true;
    let e = prepare(&t, &s).unwrap_err().to_string();
    assert!(e.contains("y is logarithmic") && e.contains("value 0"), "{e}");
}

#[test]
fn other_tools_csv_files_plot_too() {
    // Column names with unit suffixes, no policy column.
    let csv = "window_pages,latency_us,scheme\n8,120.5,gather\n16,101.0,gather\n8,150,direct\n16,149,direct\n";
    let t = CsvTable::from_reader(csv.as_bytes(), "bench.csv").unwrap();
    let mut s = spec("window_pages", "latency_us", &["scheme"], &[]);
    s.log_x = true;
    let d = prepare(&t, &s).unwrap();
    assert_eq!((d.x_label.as_str(), d.y_label.as_str()), ("window (pages)", "latency (µs)"));
    let svg = render_svg(&d, &s).unwrap();
    let texts = svg_texts(&svg);
    assert!(texts.iter().any(|t| t == "latency (µs)") && texts.iter().any(|t| t == "gather"), "{texts:?}");
    assert!(Path::new("x").extension().is_none());
}

#[test]
fn image_sizes_are_checked() {
    let mut s = spec("buffer_pages", "page_writes", &["policy"], &["trace=zipf"]);
    let d = prepare(&table(), &s).unwrap();
    s.width = 10;
    assert!(matches!(render_png(&d, &s), Err(PlotError::Spec(_))));
}
