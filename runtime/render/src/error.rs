use drs_scene::SceneError;

/// Why a scene could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Scene(Vec<SceneError>),
    #[error("linking the scene's plugins: {0}")]
    Link(String),
    #[error("compiling the kernel: {0}")]
    Compile(String),
    #[error("running the kernel: {0}")]
    Kernel(String),
    #[error("{0}")]
    Film(String),
}
