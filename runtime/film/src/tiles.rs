//! Splitting a film into square tiles, the unit of parallel work of the renderer.

use crate::FilmError;

/// A rectangle of film pixels: `x..x + width` by `y..y + height`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tile {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl Tile {
    /// The tile's pixels, row by row.
    pub fn pixels(&self) -> impl Iterator<Item = (u32, u32)> {
        let Tile { x, y, width, height } = *self;
        (y..y + height).flat_map(move |py| (x..x + width).map(move |px| (px, py)))
    }

    /// Number of pixels in the tile.
    pub fn pixel_count(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
}

/// The order in which [`tiles`] lists the tiles, which is also the order in which their
/// results are merged into the film.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileOrder {
    /// Row by row from the top left.
    Scanline,
    /// From the centre of the image outwards in a square spiral (Mitsuba's order), so that
    /// a progressive preview fills in the middle first.
    Spiral,
}

/// Covers a `width` x `height` film with tiles of `tile_size` x `tile_size` pixels (smaller at
/// the right and bottom edges when the size does not divide evenly).
pub fn tiles(width: u32, height: u32, tile_size: u32, order: TileOrder) -> Result<Vec<Tile>, FilmError> {
    if tile_size == 0 {
        return Err(FilmError::InvalidTileSize);
    }
    let columns = width.div_ceil(tile_size);
    let rows = height.div_ceil(tile_size);
    let tile_at = |column: u32, row: u32| {
        let x = column * tile_size;
        let y = row * tile_size;
        Tile { x, y, width: tile_size.min(width - x), height: tile_size.min(height - y) }
    };
    let grid = match order {
        TileOrder::Scanline => (0..rows).flat_map(|row| (0..columns).map(move |column| (column, row))).collect(),
        TileOrder::Spiral => spiral(columns, rows),
    };
    Ok(grid.into_iter().map(|(column, row)| tile_at(column, row)).collect())
}

/// The cells of a `columns` x `rows` grid in a square spiral that starts at the centre cell and
/// turns right, down, left, up with runs of 1, 1, 2, 2, 3, 3, ... cells; cells off the grid are
/// skipped until every cell has been visited.
fn spiral(columns: u32, rows: u32) -> Vec<(u32, u32)> {
    let total = columns as usize * rows as usize;
    let mut cells = Vec::with_capacity(total);
    if total == 0 {
        return cells;
    }
    let (mut column, mut row) = (i64::from((columns - 1) / 2), i64::from((rows - 1) / 2));
    let directions = [(1, 0), (0, 1), (-1, 0), (0, -1)];
    let mut run = 1;
    let mut direction = 0;
    cells.push((column as u32, row as u32));
    while cells.len() < total {
        // Two runs of each length, then the spiral widens.
        for _ in 0..2 {
            let (dx, dy) = directions[direction];
            for _ in 0..run {
                column += dx;
                row += dy;
                if (0..i64::from(columns)).contains(&column) && (0..i64::from(rows)).contains(&row) {
                    cells.push((column as u32, row as u32));
                }
            }
            direction = (direction + 1) % 4;
        }
        run += 1;
    }
    cells
}
