//! Top-down construction with the binned surface area heuristic (Wald 2007, "On fast
//! Construction of SAH-based Bounding Volume Hierarchies"): primitives are binned by centroid
//! along each axis, the cheapest bin boundary by SAH wins (or, where a node's primitives come
//! from a few shapes, the split of one shape from the others if that costs less), and subtrees
//! are built in parallel once they are large enough to pay for a task. `flatten` then collapses
//! the binary tree into the 4-wide nodes that traversal uses.

use rayon::prelude::*;

use super::{Bvh, LeafPacket, Node, NodeRef, ANALYTIC, MAX_DEPTH, WIDTH};
use crate::error::GeometryError;
use crate::math::{Aabb, Vec3};
use crate::shape::Shape;
use crate::triangle::{TrianglePacket, PACKET};

const BIN_COUNT: usize = 16;
/// SAH costs of a binary inner node and of testing one packet of up to [`PACKET`] primitives
/// (which costs about as much as testing one). `flatten` folds about three binary nodes into
/// each 4-wide node, whose four box tests together cost a fraction of a packet test, so a
/// binary split costs about a tenth of a packet. With a cost near one, any four primitives
/// became one leaf whatever their layout: two walls of a room made a leaf whose box spans the
/// room, which every ray inside it tested (2.6 packets per ray in the Cornell box against
/// 1.3 now; a large mesh gets 8% more nodes, and its rays visit about as many as before).
const TRAVERSAL_COST: f32 = 0.1;
const INTERSECTION_COST: f32 = 1.0;
/// A node with more primitives is always split (when its primitives can be told apart).
const MAX_LEAF_SIZE: usize = PACKET;
/// Nodes whose primitives come from more shapes than this are split by centroid planes only:
/// finding each primitive's shape among the node's takes a search of this length.
const MAX_SHAPE_SPLIT_SHAPES: usize = 16;
/// Subtrees with fewer primitives are built on the current thread.
const PARALLEL_THRESHOLD: usize = 4096;

#[derive(Clone, Copy, Debug)]
struct BuildPrim {
    bounds: Aabb,
    /// Index into the list of `(shape, primitive)` pairs.
    id: u32,
    shape: u32,
}

impl BuildPrim {
    // Computed where needed rather than stored, which keeps a primitive at 32 bytes.
    fn centroid(&self) -> Vec3 {
        self.bounds.center()
    }
}

enum BuildNode {
    Leaf { first: u32, count: u32 },
    Inner { bounds: [Aabb; 2], children: Box<[BuildNode; 2]> },
}

impl Bvh {
    pub(crate) fn build(shapes: &[Shape]) -> Result<Bvh, GeometryError> {
        if shapes.len() > ANALYTIC as usize {
            return Err(GeometryError::TooManyShapes(shapes.len()));
        }
        let total: u64 = shapes.iter().map(|s| s.primitive_count() as u64).sum();
        if total >= u32::MAX as u64 {
            return Err(GeometryError::TooManyPrimitives(total));
        }
        let refs: Vec<(u32, u32)> = shapes
            .iter()
            .enumerate()
            .flat_map(|(s, shape)| (0..shape.primitive_count() as u32).map(move |p| (s as u32, p)))
            .collect();
        if refs.is_empty() {
            return Ok(Bvh::default());
        }
        let mut build_prims: Vec<BuildPrim> = refs
            .par_iter()
            .enumerate()
            .map(|(id, &(s, p))| {
                let bounds = shapes[s as usize].primitive_bounds(p as usize);
                BuildPrim { bounds, id: id as u32, shape: s }
            })
            .collect();
        let (root, bounds) = build_node(&mut build_prims, 0, 0, false);
        let (mut nodes, mut packets) = (Vec::new(), Vec::new());
        let root = flatten(&root, &mut nodes, &mut |first, count| {
            let index = packets.len() as u32;
            let leaf = &build_prims[first as usize..(first + count) as usize];
            packets.extend(leaf.chunks(PACKET).map(|chunk| pack(chunk, &refs, shapes)));
            index
        });
        Ok(Bvh { nodes, packets, root: Some((root, bounds)) })
    }
}

/// The packet of up to [`PACKET`] primitives of a leaf.
fn pack(prims: &[BuildPrim], refs: &[(u32, u32)], shapes: &[Shape]) -> LeafPacket {
    let mut packet = LeafPacket {
        triangles: TrianglePacket::EMPTY,
        shape: [0; PACKET],
        prim: [0; PACKET],
        id: [u32::MAX; PACKET],
        analytic: 0,
    };
    for (slot, bp) in prims.iter().enumerate() {
        let (shape, prim) = refs[bp.id as usize];
        packet.prim[slot] = prim;
        packet.id[slot] = bp.id;
        match &shapes[shape as usize] {
            Shape::Mesh(mesh) => {
                packet.triangles.set(slot, &mesh.triangle_positions(prim as usize));
                packet.shape[slot] = shape;
            }
            Shape::Sphere(_) | Shape::Disk(_) => {
                packet.shape[slot] = shape | ANALYTIC;
                packet.analytic |= 1 << slot;
            }
        }
    }
    packet
}

/// Builds the subtree over `prims`, which start at index `first` of the final order, and
/// returns it with its bounds. Reorders `prims` into tree order. `one_shape`: all of `prims`
/// are known to come from one shape.
fn build_node(prims: &mut [BuildPrim], first: u32, depth: usize, one_shape: bool) -> (BuildNode, Aabb) {
    let bounds = prims.iter().fold(Aabb::EMPTY, |b, p| b.union(p.bounds));
    let leaf = BuildNode::Leaf { first, count: prims.len() as u32 };
    if prims.len() == 1 || depth >= MAX_DEPTH {
        return (leaf, bounds);
    }
    let centroid_bounds = prims.iter().fold(Aabb::EMPTY, |b, p| b.expand(p.centroid()));
    let shapes = if one_shape { NodeShapes::One } else { NodeShapes::of(prims) };
    let one_shape = matches!(shapes, NodeShapes::One);
    // The SAH weighs each side by its share of the node's surface area, which must be usable.
    let area = bounds.surface_area();
    let best = if area > 0.0 && area.is_finite() {
        [best_split(prims, area, &centroid_bounds), best_shape_split(&shapes, prims.len(), area)]
            .into_iter()
            .flatten()
            .min_by(|a, b| a.cost.total_cmp(&b.cost))
    } else {
        None
    };
    let mid = match best {
        Some(split) => {
            let leaf_cost = INTERSECTION_COST * packets(prims.len());
            if prims.len() <= MAX_LEAF_SIZE && leaf_cost <= split.cost {
                return (leaf, bounds);
            }
            match split.left {
                Left::Bins { bins, last } => partition(prims, |p| bins.index(p.centroid()) <= last),
                Left::Shape(shape) => partition(prims, |p| p.shape == shape),
            }
        }
        // No usable axis: equal centroids, or a box too flat for the SAH to rank splits.
        None if prims.len() <= MAX_LEAF_SIZE => return (leaf, bounds),
        None => {
            let axis = centroid_bounds.extent().max_position();
            let mid = prims.len() / 2;
            prims.select_nth_unstable_by(mid, |a, b| a.centroid()[axis].total_cmp(&b.centroid()[axis]));
            mid
        }
    };
    let (left, right) = prims.split_at_mut(mid);
    let right_first = first + mid as u32;
    let ((left, left_bounds), (right, right_bounds)) = if left.len() + right.len() >= PARALLEL_THRESHOLD {
        rayon::join(
            || build_node(left, first, depth + 1, one_shape),
            || build_node(right, right_first, depth + 1, one_shape),
        )
    } else {
        (build_node(left, first, depth + 1, one_shape), build_node(right, right_first, depth + 1, one_shape))
    };
    let node = BuildNode::Inner { bounds: [left_bounds, right_bounds], children: Box::new([left, right]) };
    (node, bounds)
}

/// Maps centroids along one axis to bins.
#[derive(Clone, Copy, Debug)]
struct Binning {
    axis: usize,
    min: f32,
    scale: f32,
}

impl Binning {
    /// `None` when the centroids do not spread along `axis`.
    fn new(axis: usize, centroid_bounds: &Aabb) -> Option<Binning> {
        let extent = centroid_bounds.extent()[axis];
        // Slightly fewer than BIN_COUNT bins per extent, so that the maximum lands in the last.
        let scale = BIN_COUNT as f32 * (1.0 - 1e-6) / extent;
        (extent > 0.0 && scale.is_finite()).then_some(Binning { axis, min: centroid_bounds.min[axis], scale })
    }

    fn index(&self, centroid: Vec3) -> usize {
        // `as` saturates, so rounding below the minimum still gives bin 0.
        (((centroid[self.axis] - self.min) * self.scale) as usize).min(BIN_COUNT - 1)
    }
}

struct Split {
    left: Left,
    /// SAH cost of splitting, in units comparable with `INTERSECTION_COST · packets`.
    cost: f32,
}

/// The primitives a [`Split`] puts on the left.
enum Left {
    /// Those whose centroids fall in bins `0..=last`.
    Bins { bins: Binning, last: usize },
    /// Those of one shape.
    Shape(u32),
}

/// The best split of `prims`, in a node of surface area `area`, at a bin boundary.
fn best_split(prims: &[BuildPrim], area: f32, centroid_bounds: &Aabb) -> Option<Split> {
    let mut best: Option<Split> = None;
    for bins in (0..3).filter_map(|axis| Binning::new(axis, centroid_bounds)) {
        let mut bin_bounds = [Aabb::EMPTY; BIN_COUNT];
        let mut bin_counts = [0usize; BIN_COUNT];
        for p in prims {
            let k = bins.index(p.centroid());
            bin_bounds[k] = bin_bounds[k].union(p.bounds);
            bin_counts[k] += 1;
        }
        // right_cost[k]: area × count of bins k+1.. (the right side of a split after bin k).
        let mut right_cost = [0.0f32; BIN_COUNT];
        let (mut right_box, mut right_count) = (Aabb::EMPTY, 0);
        for k in (1..BIN_COUNT).rev() {
            right_box = right_box.union(bin_bounds[k]);
            right_count += bin_counts[k];
            right_cost[k - 1] = if right_count > 0 { side_cost(&right_box, right_count) } else { f32::NAN };
        }
        let (mut left_box, mut left_count) = (Aabb::EMPTY, 0);
        for k in 0..BIN_COUNT - 1 {
            left_box = left_box.union(bin_bounds[k]);
            left_count += bin_counts[k];
            // A split with an empty side (NaN right cost) is no split.
            let cost = split_cost(side_cost(&left_box, left_count) + right_cost[k], area);
            if left_count > 0 && cost < best.as_ref().map_or(f32::INFINITY, |b| b.cost) {
                best = Some(Split { left: Left::Bins { bins, last: k }, cost });
            }
        }
    }
    best
}

/// The shapes that a node's primitives come from.
enum NodeShapes {
    /// One shape: then the primitives of the node's descendants also do.
    One,
    /// Each shape's index, bounds and primitive count, in order of first appearance.
    Few(Vec<(u32, Aabb, usize)>),
    /// More than [`MAX_SHAPE_SPLIT_SHAPES`].
    Many,
}

impl NodeShapes {
    fn of(prims: &[BuildPrim]) -> NodeShapes {
        let mut shapes: Vec<(u32, Aabb, usize)> = Vec::new();
        for p in prims {
            if let Some((_, shape_bounds, count)) = shapes.iter_mut().find(|(shape, ..)| *shape == p.shape) {
                (*shape_bounds, *count) = (shape_bounds.union(p.bounds), *count + 1);
            } else if shapes.len() == MAX_SHAPE_SPLIT_SHAPES {
                return NodeShapes::Many;
            } else {
                shapes.push((p.shape, p.bounds, 1));
            }
        }
        if shapes.len() > 1 {
            NodeShapes::Few(shapes)
        } else {
            NodeShapes::One
        }
    }
}

/// The best split of a node of `count` primitives and surface area `area` into one shape's
/// primitives and the others', where they come from a few `shapes`. A centroid plane cannot
/// separate an object from the walls around it, whose centroids lie on either side: in the
/// Cornell box the binned splits divided the tall block among three subtrees with walls, whose
/// boxes spanned half the room or all of it and which most rays entered. Kept whole, the block
/// gets a subtree whose box only the rays that pass near it enter.
fn best_shape_split(shapes: &NodeShapes, count: usize, area: f32) -> Option<Split> {
    let NodeShapes::Few(shapes) = shapes else { return None };
    // The bounds of the shapes before and after each one, for the bounds of the rest.
    let mut after = vec![Aabb::EMPTY; shapes.len() + 1];
    for i in (0..shapes.len()).rev() {
        after[i] = after[i + 1].union(shapes[i].1);
    }
    let mut before = Aabb::EMPTY;
    let mut best: Option<Split> = None;
    for (i, &(shape, shape_bounds, shape_count)) in shapes.iter().enumerate() {
        let rest = before.union(after[i + 1]);
        let cost = split_cost(side_cost(&shape_bounds, shape_count) + side_cost(&rest, count - shape_count), area);
        if cost < best.as_ref().map_or(f32::INFINITY, |b| b.cost) {
            best = Some(Split { left: Left::Shape(shape), cost });
        }
        before = before.union(shape_bounds);
    }
    best
}

/// One side of a split in the SAH: its surface area times the packets its `count` primitives
/// fill.
fn side_cost(bounds: &Aabb, count: usize) -> f32 {
    bounds.surface_area() * packets(count)
}

/// SAH cost of a split whose sides' [`side_cost`]s sum to `sides`, in a node of surface area
/// `area`, in units comparable with `INTERSECTION_COST · packets`.
fn split_cost(sides: f32, area: f32) -> f32 {
    TRAVERSAL_COST + INTERSECTION_COST * sides / area
}

/// Packets that `count` primitives fill, the unit of the SAH's intersection cost.
fn packets(count: usize) -> f32 {
    count.div_ceil(PACKET) as f32
}

/// Moves the elements satisfying `goes_left` to the front; returns how many there are.
fn partition(prims: &mut [BuildPrim], goes_left: impl Fn(&BuildPrim) -> bool) -> usize {
    let mut left = 0;
    for i in 0..prims.len() {
        if goes_left(&prims[i]) {
            prims.swap(left, i);
            left += 1;
        }
    }
    left
}

/// Appends the 4-wide nodes for the binary subtree `node` to `nodes` in depth-first order.
/// Each 4-wide node takes the children of a binary node and keeps opening the inner child
/// with the largest surface area (the one rays enter most often) until it has four.
/// `leaf(first, count)` packs the leaf of primitives `first..first + count` (in tree order) and
/// returns the index of its first packet.
fn flatten(node: &BuildNode, nodes: &mut Vec<Node>, leaf: &mut impl FnMut(u32, u32) -> u32) -> NodeRef {
    let (bounds, children) = match node {
        BuildNode::Leaf { first, count } => return NodeRef { index: leaf(*first, *count), count: *count },
        BuildNode::Inner { bounds, children } => (bounds, children),
    };
    let mut slots: Vec<(&BuildNode, Aabb)> = vec![(&children[0], bounds[0]), (&children[1], bounds[1])];
    while slots.len() < WIDTH {
        let widest_inner = slots
            .iter()
            .enumerate()
            .filter_map(|(i, &(node, node_bounds))| match node {
                BuildNode::Inner { bounds, children } => Some((i, node_bounds.surface_area(), bounds, children)),
                BuildNode::Leaf { .. } => None,
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, _, bounds, children)) = widest_inner else { break };
        slots.swap_remove(i);
        slots.extend([(&children[0], bounds[0]), (&children[1], bounds[1])]);
    }
    let index = nodes.len();
    let empty = NodeRef { index: 0, count: 0 };
    nodes.push(Node { bounds: [[[f32::INFINITY; WIDTH], [f32::NEG_INFINITY; WIDTH]]; 3], children: [empty; WIDTH] });
    for (slot, (child, child_bounds)) in slots.into_iter().enumerate() {
        let child_ref = flatten(child, nodes, leaf);
        let node = &mut nodes[index];
        node.children[slot] = child_ref;
        for axis in 0..3 {
            node.bounds[axis][0][slot] = child_bounds.min[axis];
            node.bounds[axis][1][slot] = child_bounds.max[axis];
        }
    }
    NodeRef { index: index as u32, count: 0 }
}

#[cfg(test)]
mod tests {
    use glam::Mat4;

    use super::*;
    use crate::math::Transform;
    use crate::shape::{cube, rectangle};

    /// The six walls of the room [-1, 1]³, two triangles each.
    fn room() -> Vec<Shape> {
        let wall = |rotation: Mat4| {
            let to_world = Transform::new(rotation * Mat4::from_translation(Vec3::new(0.0, 0.0, -1.0))).unwrap();
            Shape::from(rectangle(&to_world, false).unwrap())
        };
        let quarter = std::f32::consts::FRAC_PI_2;
        [
            Mat4::IDENTITY,
            Mat4::from_rotation_x(2.0 * quarter),
            Mat4::from_rotation_x(quarter),
            Mat4::from_rotation_x(-quarter),
            Mat4::from_rotation_y(quarter),
            Mat4::from_rotation_y(-quarter),
        ]
        .into_iter()
        .map(wall)
        .collect()
    }

    /// The children of `node` (unused slots, with empty boxes, left out).
    fn children(node: &Node) -> impl Iterator<Item = NodeRef> + '_ {
        (0..WIDTH).filter(|&c| node.bounds[0][0][c] <= node.bounds[0][1][c]).map(|c| node.children[c])
    }

    /// The shape of each primitive in the subtree `node`, sorted.
    fn shapes_under(bvh: &Bvh, node: NodeRef) -> Vec<u32> {
        let mut shapes: Vec<u32> = if node.count > 0 {
            bvh.leaf_packets(node).iter().flat_map(|p| p.shape).take(node.count as usize).collect()
        } else {
            children(&bvh.nodes[node.index as usize]).flat_map(|c| shapes_under(bvh, c)).collect()
        };
        shapes.sort_unstable();
        shapes
    }

    /// The six walls of a room, two triangles each. A ray from inside crosses one wall, so
    /// each wall must be a (flat) leaf of its own: a leaf holding two walls would span the
    /// room and be tested by every ray.
    #[test]
    fn walls_of_a_room_get_leaves_of_their_own() {
        let shapes = room();
        let bvh = Bvh::build(&shapes).unwrap();
        let leaves: Vec<NodeRef> = bvh.nodes.iter().flat_map(|n| n.children).filter(|c| c.count > 0).collect();
        assert_eq!(leaves.iter().map(|l| l.count).sum::<u32>(), 12, "every triangle in a leaf");
        for leaf in leaves {
            let walls: Vec<u32> =
                bvh.leaf_packets(leaf).iter().flat_map(|p| p.shape).take(leaf.count as usize).collect();
            assert!(walls.iter().all(|&w| w == walls[0]), "a leaf holds triangles of walls {walls:?}");
        }
    }

    /// A block standing in a room (as in the Cornell box) gets a subtree of its own, which
    /// only rays passing near it enter. No centroid plane separates it from the walls, and
    /// the binned splits alone put its triangles in subtrees with walls.
    #[test]
    fn a_block_in_a_room_gets_a_subtree_of_its_own() {
        let mut shapes = room();
        let block = Mat4::from_translation(Vec3::new(0.3, -0.4, 0.3))
            * Mat4::from_rotation_y(0.3)
            * Mat4::from_scale(Vec3::new(0.3, 0.6, 0.3));
        shapes.push(cube(&Transform::new(block).unwrap(), false).unwrap().into());
        let bvh = Bvh::build(&shapes).unwrap();
        let block_subtree = bvh.nodes.iter().flat_map(children).any(|c| shapes_under(&bvh, c) == [6; 12]);
        let tree: Vec<Vec<Vec<u32>>> =
            bvh.nodes.iter().map(|n| children(n).map(|c| shapes_under(&bvh, c)).collect()).collect();
        assert!(block_subtree, "no subtree holds the block alone; shapes under each node's children: {tree:?}");
    }
}
